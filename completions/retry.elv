
use builtin;
use str;

set edit:completion:arg-completer[retry] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'retry'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'retry'= {
            cand -b 'Base delay: the first sleep''s ceiling'
            cand --base 'Base delay: the first sleep''s ceiling'
            cand -c 'The largest sleep'
            cand --cap 'The largest sleep'
            cand -f 'Growth of the ceiling per attempt for none/full/equal (1 keeps it constant)'
            cand --factor 'Growth of the ceiling per attempt for none/full/equal (1 keeps it constant)'
            cand -n 'Total runs of COMMAND, the first included, or `unlimited`'
            cand --max-attempts 'Total runs of COMMAND, the first included, or `unlimited`'
            cand --retry-on 'Exit codes that are retried (`none`: only on --retry-if-output); other failing codes stop at once'
            cand --fatal-on 'Exit codes that stop at once, even if --retry-on covers them'
            cand --success-on 'Exit codes that count as success'
            cand -t 'Limit for one attempt, which then counts as exit code 124'
            cand --timeout 'Limit for one attempt, which then counts as exit code 124'
            cand --kill-after 'Grace between SIGTERM and SIGKILL when an attempt is stopped'
            cand -m 'Limit for the whole run, its sleeps included'
            cand --max-time 'Limit for the whole run, its sleeps included'
            cand --seed 'Fixed random seed, for reproducible schedules and tests only: clients sharing a seed sleep in lockstep, which defeats jitter'
            cand --log-format 'How retry''s own log lines are written'
            cand --log-file 'Append retry''s own log lines to this file instead of stderr'
            cand --on-retry 'Shell command run with `sh -c` (Windows: `cmd /d /s /c`) after a failed attempt, before the sleep (cleanup); it sees RETRY_ATTEMPT and RETRY_EXIT_CODE, its output goes to stderr, and its failure is logged, not fatal'
            cand --stdin 'What each attempt reads: `replay` the same stdin every time, `null` nothing'
            cand --stdin-limit 'With --stdin replay: the most bytes of stdin kept to replay (past 64 MiB in a temporary file under TMPDIR). The attempt reading a longer stdin as it comes still gets all of it; a retry that would need more than was kept (or than a full disk kept) is not run: exit status 125 rather than feed any attempt a truncated input'
            cand --retry-if-output 'Retry when a line of output matches REGEX, even after exit code 0'
            cand --stop-if-output 'Stop at once, with the attempt''s own status, on a line matching REGEX'
            cand --delay-from-output 'Sleep at least the wait a server asks for (Retry-After), read from the output'
            cand --budget 'Draw retries from a budget shared by every retry on this host that names it'
            cand --budget-tokens 'The budget''s size, and what a full one holds (AWS SDK retry quota: 500); a bucket in use keeps the size it was given until it is full again'
            cand --budget-cost 'Tokens one retry costs, twice that after a timeout; a success after retries gives the last one''s cost back (a first-try success never touches the budget)'
            cand --budget-refill 'Tokens the budget regains per second (0: only successes refill it)'
            cand --breaker 'Stop calling a failing service: a circuit shared by every retry naming it'
            cand --breaker-after 'Runs in a row that gave up on transient failures (attempts or time ran out, the budget refused a retry) before the circuit opens [default: 3]'
            cand --breaker-cooldown 'How long an open circuit stays open before one run may probe; after each failed probe longer (doubled, equal jitter, up to --breaker-cooldown-max) [default: 30s]'
            cand --breaker-cooldown-max 'The longest cooldown failed probes grow it to (given, at least --breaker-cooldown, and at most 24h, as the cooldown; a longer cooldown is not grown): the last host resumes within about this and one period of its job after the service is back [default: 4m]'
            cand --breaker-exit-code 'The exit status of a run the open circuit did not let start, or whose every attempt --throttle rejected (1 to 255, but not retry''s own 2 and 124 to 127): one no command of yours exits with, to tell a skipped run from a command''s own 75 without reading the log [default: 75]'
            cand --store 'Where --budget, --breaker and --throttle keep their state: `host` (this host''s file), or a Redis server that a whole fleet shares: redis://[user:password@]host[:port][/db] or unix:///path/to/redis.sock (set the password through the variable, not the flag: a command line is visible to every user). A store that fails lets the run go on without them, with one warning'
            cand --budget-store 'The old spelling of --store, still read (below --store and RETRY_STORE)'
            cand --store-timeout 'The most one exchange with a Redis store (connecting, the script, its whole answer) may take before the run goes on without it, and the longest --throttle waits for its host file''s lock (250ms if not given)'
            cand --budget-timeout 'The old spelling of --store-timeout, still read (below --store-timeout and RETRY_STORE_TIMEOUT)'
            cand --metrics-dir 'Write the job''s series for node_exporter''s textfile collector in this directory'
            cand --statsd 'Send counters and timings to this StatsD server over UDP'
            cand --job 'The job''s name in the metrics [default: the program''s name and a hash of the command line, e.g. curl-3f9a2c1b]'
            cand --preset 'Judge failures as one program reports them (retry --presets shows the rules)'
            cand --foreground 'Whether the command stays in retry''s process group (so it can read the terminal, and job control stops and continues both) or gets a process group of its own (so timeouts and signals reach all its descendants); `auto` keeps it in retry''s group when stdin is a terminal (Windows: a console process group; there is no job control)'
            cand --completions 'Print a completion script for SHELL to stdout, and run nothing'
            cand --presets 'Print the presets as a table, or preset NAME as flags, and run nothing'
            cand --budget-status 'Print the state of the shared retry budget NAME, and run nothing'
            cand --breaker-status 'Print the state of the circuit breaker NAME, and run nothing'
            cand --throttle 'Reject attempts locally while the service accepts too few: a throttle shared by every retry naming it'
            cand --throttle-k 'K: how many attempts per accepted one the throttle lets through before it rejects any (a number above 0; larger rejects less) [default: 2]'
            cand --throttle-window 'The sliding window over which the throttle counts attempts and accepts (1s to 24h) [default: 2m]'
            cand --throttle-status 'Print the state of the adaptive throttle NAME, and run nothing'
            cand --format 'Output of --plan and --simulate'
            cand --clients 'Client counts, as counts and ranges with a step (`1,2,5,10-190:10`)'
            cand --reps 'Repetitions per strategy and client count, or per row of --model outage (3 there unless given)'
            cand --net-delay 'Mean one-way network delay'
            cand --net-sd 'Standard deviation of the network delay'
            cand --model 'The experiment: `occ` is the AWS post''s (optimistic concurrency on one row); `busy` a server that serves one request at a time and rejects the others at once; `outage` a cron fleet against a service that is down, then back with a limited capacity, under each protection (none, budgets, the circuit breaker)'
            cand --service-time '--model busy: mean time the server takes to serve one request'
            cand --service-sd '--model busy: standard deviation of the service time'
            cand --max-work 'Stop a repetition once the server has handled this many requests (its row then counts it under `capped`), or `unlimited`; without backoff, 100,000 clients would take hours'
            cand --hosts '--model outage: hosts, each running the job on its own schedule'
            cand --every '--model outage: how often each host runs the job (as cron does, at a fixed phase of its own)'
            cand --outage '--model outage: how long the service is down, from the start (every request fails at once)'
            cand --capacity '--model outage: requests a second the service serves after the outage (the rest of each second''s fail at once, as a 503)'
            cand --span '--model outage: how long the hosts start runs (those running then finish)'
            cand --breaker-afters '--model outage: the breaker''s `--breaker-after` values to compare (counted failures in a row that open a circuit)'
            cand --breaker-cooldowns '--model outage: the breaker''s `--breaker-cooldown` values to compare (the first cooldown of an open circuit)'
            cand --breaker-cooldown-maxes '--model outage: the breaker''s `--breaker-cooldown-max` values to compare (the longest cooldown failed probes grow it to)'
            cand --svg 'Also draw the post''s two charts (work and completion time against clients) into this SVG file'
            cand -j 'Backoff strategy of the sleeps between attempts'
            cand --jitter 'Backoff strategy of the sleeps between attempts'
            cand -q 'Log only when giving up'
            cand --quiet 'Log only when giving up'
            cand -v 'Also log each attempt''s start and a first-try success'
            cand --verbose 'Also log each attempt''s start and a first-try success'
            cand --stdout-once 'Only an attempt that succeeds writes to stdout (failed ones: to stderr)'
            cand --statsd-tags 'Give the job and outcome as DogStatsD tags (|#retry_job:…,outcome:…), not in the names'
            cand -s 'Run COMMAND and ARGS joined with spaces through `/bin/sh -c` (for pipelines; Windows: `cmd /d /s /c`)'
            cand --shell 'Run COMMAND and ARGS joined with spaces through `/bin/sh -c` (for pipelines; Windows: `cmd /d /s /c`)'
            cand --plan 'Print the sleeps a run with these options would take, and run nothing'
            cand --simulate 'Simulate competing clients as in the AWS post, and run nothing'
            cand --man 'Print the man page (roff) to stdout, and run nothing'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
