
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'retry' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'retry'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'retry' {
            [CompletionResult]::new('-b', '-b', [CompletionResultType]::ParameterName, 'Base delay: the first sleep''s ceiling')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'Base delay: the first sleep''s ceiling')
            [CompletionResult]::new('--throttle-base', '--throttle-base', [CompletionResultType]::ParameterName, 'Base delay after a throttled failure (the server asked to slow down)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'The largest sleep')
            [CompletionResult]::new('--cap', '--cap', [CompletionResultType]::ParameterName, 'The largest sleep')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Growth of the ceiling per attempt for none/full/equal (1 keeps it constant)')
            [CompletionResult]::new('--factor', '--factor', [CompletionResultType]::ParameterName, 'Growth of the ceiling per attempt for none/full/equal (1 keeps it constant)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Total runs of COMMAND, the first included, or `unlimited`')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Total runs of COMMAND, the first included, or `unlimited`')
            [CompletionResult]::new('--retry-on', '--retry-on', [CompletionResultType]::ParameterName, 'Exit codes that are retried (`none`: only on --retry-if-output); other failing codes stop at once')
            [CompletionResult]::new('--fatal-on', '--fatal-on', [CompletionResultType]::ParameterName, 'Exit codes that stop at once, even if --retry-on covers them')
            [CompletionResult]::new('--success-on', '--success-on', [CompletionResultType]::ParameterName, 'Exit codes that count as success')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Limit for one attempt, which then counts as exit code 124')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Limit for one attempt, which then counts as exit code 124')
            [CompletionResult]::new('--kill-after', '--kill-after', [CompletionResultType]::ParameterName, 'Grace between SIGTERM and SIGKILL when an attempt is stopped')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'Limit for the whole run, its sleeps included')
            [CompletionResult]::new('--max-time', '--max-time', [CompletionResultType]::ParameterName, 'Limit for the whole run, its sleeps included')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Fixed random seed, for reproducible schedules and tests only: clients sharing a seed sleep in lockstep, which defeats jitter')
            [CompletionResult]::new('--splay', '--splay', [CompletionResultType]::ParameterName, 'Sleep a random time below DURATION before the first attempt')
            [CompletionResult]::new('--reset-after', '--reset-after', [CompletionResultType]::ParameterName, 'An attempt that ran this long before failing starts the attempts anew')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How retry''s own log lines are written')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Append retry''s own log lines to this file instead of stderr')
            [CompletionResult]::new('--on-retry', '--on-retry', [CompletionResultType]::ParameterName, 'Shell command run with `sh -c` (Windows: `cmd /d /s /c`) after a failed attempt, before the sleep (cleanup); it sees RETRY_ATTEMPT and RETRY_EXIT_CODE, its output goes to stderr, and its failure is logged, not fatal')
            [CompletionResult]::new('--on-start', '--on-start', [CompletionResultType]::ParameterName, 'Shell command run once, before the first attempt (a monitor''s start ping)')
            [CompletionResult]::new('--on-exit', '--on-exit', [CompletionResultType]::ParameterName, 'Shell command run once the run is over, however it ended (a monitor''s ping)')
            [CompletionResult]::new('--on-exit-stdin', '--on-exit-stdin', [CompletionResultType]::ParameterName, 'What --on-exit reads: `tail` the last attempt''s output (its last 10 KiB)')
            [CompletionResult]::new('--hook-timeout', '--hook-timeout', [CompletionResultType]::ParameterName, 'How long --on-start or --on-exit may run: then SIGTERM, and SIGKILL after --kill-after (what it left running is stopped when it ends)')
            [CompletionResult]::new('--stdin', '--stdin', [CompletionResultType]::ParameterName, 'What each attempt reads: `replay` the same stdin every time, `null` nothing')
            [CompletionResult]::new('--stdin-limit', '--stdin-limit', [CompletionResultType]::ParameterName, 'With --stdin replay: the most bytes of stdin kept to replay (past 64 MiB in a temporary file under TMPDIR). The attempt reading a longer stdin as it comes still gets all of it; a retry that would need more than was kept (or than a full disk kept) is not run: exit status 125 rather than feed any attempt a truncated input')
            [CompletionResult]::new('--retry-if-output', '--retry-if-output', [CompletionResultType]::ParameterName, 'Retry when a line of output matches REGEX, even after exit code 0')
            [CompletionResult]::new('--stop-if-output', '--stop-if-output', [CompletionResultType]::ParameterName, 'Stop at once, with the attempt''s own status, on a line matching REGEX')
            [CompletionResult]::new('--throttle-if-output', '--throttle-if-output', [CompletionResultType]::ParameterName, 'A line matching REGEX: the server asked to slow down (throttled)')
            [CompletionResult]::new('--delay-from-output', '--delay-from-output', [CompletionResultType]::ParameterName, 'Sleep at least the wait a server asks for (Retry-After), read from the output')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Draw retries from a budget shared by every retry on this host that names it')
            [CompletionResult]::new('--budget-tokens', '--budget-tokens', [CompletionResultType]::ParameterName, 'The budget''s size, and what a full one holds (AWS SDK retry quota: 500); a bucket in use keeps the size it was given until it is full again')
            [CompletionResult]::new('--budget-cost', '--budget-cost', [CompletionResultType]::ParameterName, 'Tokens the retry of a transient failure costs (a timeout''s too; AWS SDKs since 2026: 14); a success after retries gives the last one''s cost back (a first-try success never touches the budget)')
            [CompletionResult]::new('--budget-throttle-cost', '--budget-throttle-cost', [CompletionResultType]::ParameterName, 'Tokens the retry of a throttled failure costs (the server asked to slow down; AWS SDKs: 5) [default: 5]')
            [CompletionResult]::new('--budget-refill', '--budget-refill', [CompletionResultType]::ParameterName, 'Tokens the budget regains per second (0: only successes refill it)')
            [CompletionResult]::new('--breaker', '--breaker', [CompletionResultType]::ParameterName, 'Stop calling a failing service: a circuit shared by every retry naming it')
            [CompletionResult]::new('--breaker-after', '--breaker-after', [CompletionResultType]::ParameterName, 'Runs in a row that gave up on transient failures (attempts or time ran out, the budget refused a retry) before the circuit opens [default: 3]')
            [CompletionResult]::new('--breaker-cooldown', '--breaker-cooldown', [CompletionResultType]::ParameterName, 'How long an open circuit stays open before one run may probe; after each failed probe longer (doubled, equal jitter, up to --breaker-cooldown-max) [default: 30s]')
            [CompletionResult]::new('--breaker-cooldown-max', '--breaker-cooldown-max', [CompletionResultType]::ParameterName, 'The longest cooldown failed probes grow it to (given, at least --breaker-cooldown, and at most 24h, as the cooldown; a longer cooldown is not grown): the last host resumes within about this and one period of its job after the service is back [default: 4m]')
            [CompletionResult]::new('--breaker-exit-code', '--breaker-exit-code', [CompletionResultType]::ParameterName, 'The exit status of a run the open circuit did not let start, or whose every attempt --throttle rejected (1 to 255, but not retry''s own 2 and 124 to 127): one no command of yours exits with, to tell a skipped run from a command''s own 75 without reading the log [default: 75]')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Where --budget, --breaker and --throttle keep their state: `host` (this host''s file), or a Redis server that a whole fleet shares: redis://[user:password@]host[:port][/db] or unix:///path/to/redis.sock (set the password through the variable, not the flag: a command line is visible to every user). A store that fails lets the run go on without them, with one warning')
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'The old spelling of --store, still read (below --store and RETRY_STORE)')
            [CompletionResult]::new('--store-timeout', '--store-timeout', [CompletionResultType]::ParameterName, 'The most one exchange with a Redis store (connecting, the script, its whole answer) may take before the run goes on without it, and the longest --throttle waits for its host file''s lock (250ms if not given)')
            [CompletionResult]::new('--budget-timeout', '--budget-timeout', [CompletionResultType]::ParameterName, 'The old spelling of --store-timeout, still read (below --store-timeout and RETRY_STORE_TIMEOUT)')
            [CompletionResult]::new('--metrics-dir', '--metrics-dir', [CompletionResultType]::ParameterName, 'Write the job''s series for node_exporter''s textfile collector in this directory')
            [CompletionResult]::new('--statsd', '--statsd', [CompletionResultType]::ParameterName, 'Send counters and timings to this StatsD server over UDP')
            [CompletionResult]::new('--job', '--job', [CompletionResultType]::ParameterName, 'The job''s name in the metrics [default: the program''s name and a hash of the command line, e.g. curl-3f9a2c1b]')
            [CompletionResult]::new('--preset', '--preset', [CompletionResultType]::ParameterName, 'Judge failures as one program reports them (retry --presets shows the rules)')
            [CompletionResult]::new('--alternate', '--alternate', [CompletionResultType]::ParameterName, 'Run CMD in COMMAND''s place on a later attempt (repeatable: a mirror''s command)')
            [CompletionResult]::new('--alternate-repeat', '--alternate-repeat', [CompletionResultType]::ParameterName, 'What follows the last --alternate: `all` (COMMAND and each again) or `last`')
            [CompletionResult]::new('--foreground', '--foreground', [CompletionResultType]::ParameterName, 'Whether the command stays in retry''s process group (so it can read the terminal, and job control stops and continues both) or gets a process group of its own (so timeouts and signals reach all its descendants); `auto` keeps it in retry''s group when stdin is a terminal (Windows: a console process group; there is no job control)')
            [CompletionResult]::new('--completions', '--completions', [CompletionResultType]::ParameterName, 'Print a completion script for SHELL to stdout, and run nothing')
            [CompletionResult]::new('--presets', '--presets', [CompletionResultType]::ParameterName, 'Print the presets as a table, or preset NAME as flags, and run nothing')
            [CompletionResult]::new('--budget-status', '--budget-status', [CompletionResultType]::ParameterName, 'Print the state of the shared retry budget NAME, and run nothing')
            [CompletionResult]::new('--breaker-status', '--breaker-status', [CompletionResultType]::ParameterName, 'Print the state of the circuit breaker NAME, and run nothing')
            [CompletionResult]::new('--throttle', '--throttle', [CompletionResultType]::ParameterName, 'Reject attempts locally while the service accepts too few: a throttle shared by every retry naming it')
            [CompletionResult]::new('--throttle-k', '--throttle-k', [CompletionResultType]::ParameterName, 'K: how many attempts per accepted one the throttle lets through before it rejects any (a number above 0; larger rejects less; the SRE book''s is 2) [default: 4]')
            [CompletionResult]::new('--throttle-window', '--throttle-window', [CompletionResultType]::ParameterName, 'The sliding window over which the throttle counts attempts and accepts (1s to 24h) [default: 2m]')
            [CompletionResult]::new('--throttle-status', '--throttle-status', [CompletionResultType]::ParameterName, 'Print the state of the adaptive throttle NAME, and run nothing')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output of --plan and --simulate')
            [CompletionResult]::new('--clients', '--clients', [CompletionResultType]::ParameterName, 'Client counts, as counts and ranges with a step (`1,2,5,10-190:10`)')
            [CompletionResult]::new('--reps', '--reps', [CompletionResultType]::ParameterName, 'Repetitions per strategy and client count, or per row of --model outage or throttle (3 there unless given)')
            [CompletionResult]::new('--net-delay', '--net-delay', [CompletionResultType]::ParameterName, 'Mean one-way network delay')
            [CompletionResult]::new('--net-sd', '--net-sd', [CompletionResultType]::ParameterName, 'Standard deviation of the network delay')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The experiment: `occ` is the AWS post''s (optimistic concurrency on one row); `busy` a server that serves one request at a time and rejects the others at once; `outage` a cron fleet against a service that is down, then back with a limited capacity, under each protection (none, budgets, the circuit breaker); `throttle` a cron fleet or looping clients against a service that throttles (429) past its capacity, under each protection (backoff, throttle-aware backoff, budgets, breakers, the adaptive throttle)')
            [CompletionResult]::new('--service-time', '--service-time', [CompletionResultType]::ParameterName, '--model busy: mean time the server takes to serve one request')
            [CompletionResult]::new('--service-sd', '--service-sd', [CompletionResultType]::ParameterName, '--model busy: standard deviation of the service time')
            [CompletionResult]::new('--max-work', '--max-work', [CompletionResultType]::ParameterName, 'Stop a repetition once the server has handled this many requests (its row then counts it under `capped`), or `unlimited`; without backoff, 100,000 clients would take hours')
            [CompletionResult]::new('--hosts', '--hosts', [CompletionResultType]::ParameterName, '--model outage: hosts, each running the job on its own schedule')
            [CompletionResult]::new('--every', '--every', [CompletionResultType]::ParameterName, '--model outage and throttle: how often each host runs the job (as cron does: at a fixed phase of its own, or with --model throttle all at the same mark); with --model throttle also a client''s pause between its jobs')
            [CompletionResult]::new('--outage', '--outage', [CompletionResultType]::ParameterName, '--model outage: how long the service is down, from the start (every request fails at once)')
            [CompletionResult]::new('--capacity', '--capacity', [CompletionResultType]::ParameterName, '--model outage and throttle: requests a second the service serves (after the outage; the rest of each second''s fail at once, as a 503, or with --model throttle a 429; 20 there unless given)')
            [CompletionResult]::new('--capacity-window', '--capacity-window', [CompletionResultType]::ParameterName, '--model throttle: the service''s limiter window: it admits --capacity requests in each (shorter than a second only to scale time down, as bench/throttle-live does)')
            [CompletionResult]::new('--spawn-time', '--spawn-time', [CompletionResultType]::ParameterName, '--model throttle: the time each attempt takes to start and end besides the network, a process''s start-up (bench/throttle-live measures its own)')
            [CompletionResult]::new('--span', '--span', [CompletionResultType]::ParameterName, '--model outage and throttle: how long the hosts start runs (those running then finish; 20m with --model throttle unless given)')
            [CompletionResult]::new('--breaker-afters', '--breaker-afters', [CompletionResultType]::ParameterName, '--model outage: the breaker''s `--breaker-after` values to compare (counted failures in a row that open a circuit)')
            [CompletionResult]::new('--breaker-cooldowns', '--breaker-cooldowns', [CompletionResultType]::ParameterName, '--model outage: the breaker''s `--breaker-cooldown` values to compare (the first cooldown of an open circuit)')
            [CompletionResult]::new('--breaker-cooldown-maxes', '--breaker-cooldown-maxes', [CompletionResultType]::ParameterName, '--model outage: the breaker''s `--breaker-cooldown-max` values to compare (the longest cooldown failed probes grow it to)')
            [CompletionResult]::new('--loads', '--loads', [CompletionResultType]::ParameterName, '--model throttle: the offered loads to compare, as multiples of --capacity (the first attempts a second the hosts would send if every request succeeded)')
            [CompletionResult]::new('--arrivals', '--arrivals', [CompletionResultType]::ParameterName, '--model throttle: where the load comes from: `cron`, hosts that all run the job at the same mark of each --every; `clients`, each running its next job --every after its last one ended')
            [CompletionResult]::new('--hints', '--hints', [CompletionResultType]::ParameterName, '--model throttle: whether a 429 carries a Retry-After: `none`, `retry-after` (the time until the capacity frees, in whole seconds)')
            [CompletionResult]::new('--error-rate', '--error-rate', [CompletionResultType]::ParameterName, '--model throttle: the share of the requests the service admits that fail anyway (a 500: a transient failure), as a percentage')
            [CompletionResult]::new('--throttle-bases', '--throttle-bases', [CompletionResultType]::ParameterName, '--model throttle: the throttle bases to compare (a throttled attempt''s sleep drawn on it instead of --base; none above --cap)')
            [CompletionResult]::new('--throttle-ks', '--throttle-ks', [CompletionResultType]::ParameterName, '--model throttle: the adaptive throttle''s K values to compare (the requests let through per accepted one before any is rejected)')
            [CompletionResult]::new('--throttle-windows', '--throttle-windows', [CompletionResultType]::ParameterName, '--model throttle: the adaptive throttle''s windows to compare (what its counts cover)')
            [CompletionResult]::new('--svg', '--svg', [CompletionResultType]::ParameterName, 'Also draw the post''s two charts (work and completion time against clients) into this SVG file')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Backoff strategy of the sleeps between attempts')
            [CompletionResult]::new('--jitter', '--jitter', [CompletionResultType]::ParameterName, 'Backoff strategy of the sleeps between attempts')
            [CompletionResult]::new('--splay-stable', '--splay-stable', [CompletionResultType]::ParameterName, 'Make --splay''s delay this host''s own, the same every run')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Log only when giving up')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Log only when giving up')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Also log each attempt''s start and a first-try success')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Also log each attempt''s start and a first-try success')
            [CompletionResult]::new('--stdout-once', '--stdout-once', [CompletionResultType]::ParameterName, 'Only an attempt that succeeds writes to stdout (failed ones: to stderr)')
            [CompletionResult]::new('--statsd-tags', '--statsd-tags', [CompletionResultType]::ParameterName, 'Give the job and outcome as DogStatsD tags (|#retry_job:…,outcome:…), not in the names')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Run COMMAND and ARGS joined with spaces through `/bin/sh -c` (for pipelines; Windows: `cmd /d /s /c`)')
            [CompletionResult]::new('--shell', '--shell', [CompletionResultType]::ParameterName, 'Run COMMAND and ARGS joined with spaces through `/bin/sh -c` (for pipelines; Windows: `cmd /d /s /c`)')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Print the sleeps a run with these options would take, and run nothing')
            [CompletionResult]::new('--simulate', '--simulate', [CompletionResultType]::ParameterName, 'Simulate competing clients as in the AWS post, and run nothing')
            [CompletionResult]::new('--man', '--man', [CompletionResultType]::ParameterName, 'Print the man page (roff) to stdout, and run nothing')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
