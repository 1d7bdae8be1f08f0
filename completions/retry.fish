complete -c retry -s b -l base -d 'Base delay: the first sleep\'s ceiling' -r -f
complete -c retry -l throttle-base -d 'Base delay after a throttled failure (the server asked to slow down)' -r -f
complete -c retry -s c -l cap -d 'The largest sleep' -r -f
complete -c retry -s f -l factor -d 'Growth of the ceiling per attempt for none/full/equal (1 keeps it constant)' -r -f
complete -c retry -s n -l max-attempts -d 'Total runs of COMMAND, the first included, or `unlimited`' -r -f
complete -c retry -l retry-on -d 'Exit codes that are retried (`none`: only on --retry-if-output); other failing codes stop at once' -r -f
complete -c retry -l fatal-on -d 'Exit codes that stop at once, even if --retry-on covers them' -r -f
complete -c retry -l success-on -d 'Exit codes that count as success' -r -f
complete -c retry -s t -l timeout -d 'Limit for one attempt, which then counts as exit code 124' -r -f
complete -c retry -l kill-after -d 'Grace between SIGTERM and SIGKILL when an attempt is stopped' -r -f
complete -c retry -s m -l max-time -d 'Limit for the whole run, its sleeps included' -r -f
complete -c retry -l seed -d 'Fixed random seed, for reproducible schedules and tests only: clients sharing a seed sleep in lockstep, which defeats jitter' -r -f
complete -c retry -l splay -d 'Sleep a random time below DURATION before the first attempt' -r -f
complete -c retry -l reset-after -d 'An attempt that ran this long before failing starts the attempts anew' -r -f
complete -c retry -l log-format -d 'How retry\'s own log lines are written' -r -f -a "auto\t'`github` when GITHUB_ACTIONS=true, else `text`'
text\t'One readable line per event'
json\t'One JSON object per line'
github\t'GitHub Actions workflow commands: retries as warnings, giving up as an error'"
complete -c retry -l log-file -d 'Append retry\'s own log lines to this file instead of stderr' -r -F
complete -c retry -l on-retry -d 'Shell command run with `sh -c` (Windows: `cmd /d /s /c`) after a failed attempt, before the sleep (cleanup); it sees RETRY_ATTEMPT and RETRY_EXIT_CODE, its output goes to stderr, and its failure is logged, not fatal' -r -f -a "(__fish_complete_command)"
complete -c retry -l on-start -d 'Shell command run once, before the first attempt (a monitor\'s start ping)' -r -f -a "(__fish_complete_command)"
complete -c retry -l on-exit -d 'Shell command run once the run is over, however it ended (a monitor\'s ping)' -r -f -a "(__fish_complete_command)"
complete -c retry -l on-exit-stdin -d 'What --on-exit reads: `tail` the last attempt\'s output (its last 10 KiB)' -r -f -a "null\t'An empty stdin'
tail\t'The last attempt\'s stdout and stderr, their last 10 KiB'"
complete -c retry -l hook-timeout -d 'How long --on-start or --on-exit may run: then SIGTERM, and SIGKILL after --kill-after (what it left running is stopped when it ends)' -r -f
complete -c retry -l stdin -d 'What each attempt reads: `replay` the same stdin every time, `null` nothing' -r -f -a "inherit\t'Pass retry\'s stdin on as is: a later attempt may find it already consumed'
replay\t'Read stdin once (as it arrives) and feed the same bytes to every attempt'
null\t'Give every attempt an empty stdin, so a command waiting for input fails fast'"
complete -c retry -l stdin-limit -d 'With --stdin replay: the most bytes of stdin kept to replay (past 64 MiB in a temporary file under TMPDIR). The attempt reading a longer stdin as it comes still gets all of it; a retry that would need more than was kept (or than a full disk kept) is not run: exit status 125 rather than feed any attempt a truncated input' -r -f
complete -c retry -l retry-if-output -d 'Retry when a line of output matches REGEX, even after exit code 0' -r -f
complete -c retry -l stop-if-output -d 'Stop at once, with the attempt\'s own status, on a line matching REGEX' -r -f
complete -c retry -l throttle-if-output -d 'A line matching REGEX: the server asked to slow down (throttled)' -r -f
complete -c retry -l delay-from-output -d 'Sleep at least the wait a server asks for (Retry-After), read from the output' -r -f
complete -c retry -l budget -d 'Draw retries from a budget shared by every retry on this host that names it' -r -f
complete -c retry -l budget-tokens -d 'The budget\'s size, and what a full one holds (AWS SDK retry quota: 500); a bucket in use keeps the size it was given until it is full again' -r -f
complete -c retry -l budget-cost -d 'Tokens the retry of a transient failure costs (a timeout\'s too; AWS SDKs since 2026: 14); a success after retries gives the last one\'s cost back (a first-try success never touches the budget)' -r -f
complete -c retry -l budget-throttle-cost -d 'Tokens the retry of a throttled failure costs (the server asked to slow down; AWS SDKs: 5) [default: 5]' -r -f
complete -c retry -l budget-refill -d 'Tokens the budget regains per second (0: only successes refill it)' -r -f
complete -c retry -l breaker -d 'Stop calling a failing service: a circuit shared by every retry naming it' -r -f
complete -c retry -l breaker-after -d 'Runs in a row that gave up on transient failures (attempts or time ran out, the budget refused a retry) before the circuit opens [default: 3]' -r -f
complete -c retry -l breaker-cooldown -d 'How long an open circuit stays open before one run may probe; after each failed probe longer (doubled, equal jitter, up to --breaker-cooldown-max) [default: 30s]' -r -f
complete -c retry -l breaker-cooldown-max -d 'The longest cooldown failed probes grow it to (given, at least --breaker-cooldown, and at most 24h, as the cooldown; a longer cooldown is not grown): the last host resumes within about this and one period of its job after the service is back [default: 4m]' -r -f
complete -c retry -l breaker-exit-code -d 'The exit status of a run the open circuit did not let start, or whose every attempt --throttle rejected (1 to 255, but not retry\'s own 2 and 124 to 127): one no command of yours exits with, to tell a skipped run from a command\'s own 75 without reading the log [default: 75]' -r -f
complete -c retry -l store -d 'Where --budget, --breaker and --throttle keep their state: `host` (this host\'s file), or a Redis server that a whole fleet shares: redis://[user:password@]host[:port][/db] or unix:///path/to/redis.sock (set the password through the variable, not the flag: a command line is visible to every user). A store that fails lets the run go on without them, with one warning' -r -f
complete -c retry -l budget-store -d 'The old spelling of --store, still read (below --store and RETRY_STORE)' -r -f
complete -c retry -l store-timeout -d 'The most one exchange with a Redis store (connecting, the script, its whole answer) may take before the run goes on without it, and the longest --throttle waits for its host file\'s lock (250ms if not given)' -r -f
complete -c retry -l budget-timeout -d 'The old spelling of --store-timeout, still read (below --store-timeout and RETRY_STORE_TIMEOUT)' -r -f
complete -c retry -l metrics-dir -d 'Write the job\'s series for node_exporter\'s textfile collector in this directory' -r -f -a "(__fish_complete_directories)"
complete -c retry -l statsd -d 'Send counters and timings to this StatsD server over UDP' -r -f -a "(__fish_print_hostnames)"
complete -c retry -l job -d 'The job\'s name in the metrics [default: the program\'s name and a hash of the command line, e.g. curl-3f9a2c1b]' -r -f
complete -c retry -l preset -d 'Judge failures as one program reports them (retry --presets shows the rules)' -r -f -a "curl\t''
wget\t''
git\t''
ssh\t''
rsync\t''
apt\t''
docker\t''
npm\t''
pip\t''
none\t''"
complete -c retry -l alternate -d 'Run CMD in COMMAND\'s place on a later attempt (repeatable: a mirror\'s command)' -r -f -a "(__fish_complete_command)"
complete -c retry -l alternate-repeat -d 'What follows the last --alternate: `all` (COMMAND and each again) or `last`' -r -f -a "all\t'COMMAND again after the last alternate, then each alternate again (mirrors in turn)'
last\t'The last alternate on every later attempt (nick-fields/retry\'s new_command_on_retry)'"
complete -c retry -l foreground -d 'Whether the command stays in retry\'s process group (so it can read the terminal, and job control stops and continues both) or gets a process group of its own (so timeouts and signals reach all its descendants); `auto` keeps it in retry\'s group when stdin is a terminal (Windows: a console process group; there is no job control)' -r -f -a "auto\t'retry\'s group when stdin is a terminal, else a group of its own'
always\t'Always share retry\'s process group (interactive commands)'
never\t'Always give the command a process group of its own'"
complete -c retry -l completions -d 'Print a completion script for SHELL to stdout, and run nothing' -r -f -a "bash\t''
elvish\t''
fish\t''
powershell\t''
zsh\t''"
complete -c retry -l presets -d 'Print the presets as a table, or preset NAME as flags, and run nothing' -r -f -a "curl\t''
wget\t''
git\t''
ssh\t''
rsync\t''
apt\t''
docker\t''
npm\t''
pip\t''
none\t''"
complete -c retry -l budget-status -d 'Print the state of the shared retry budget NAME, and run nothing' -r -f
complete -c retry -l breaker-status -d 'Print the state of the circuit breaker NAME, and run nothing' -r -f
complete -c retry -l throttle -d 'Reject attempts locally while the service accepts too few: a throttle shared by every retry naming it' -r -f
complete -c retry -l throttle-k -d 'K: how many attempts per accepted one the throttle lets through before it rejects any (a number above 0; larger rejects less; the SRE book\'s is 2) [default: 4]' -r -f
complete -c retry -l throttle-window -d 'The sliding window over which the throttle counts attempts and accepts (1s to 24h) [default: 2m]' -r -f
complete -c retry -l throttle-status -d 'Print the state of the adaptive throttle NAME, and run nothing' -r -f
complete -c retry -l format -d 'Output of --plan and --simulate' -r -f -a "table\t'Aligned columns for people'
csv\t'Comma-separated values with a header row'
json\t'One JSON array of objects'"
complete -c retry -l clients -d 'Client counts, as counts and ranges with a step (`1,2,5,10-190:10`)' -r -f
complete -c retry -l reps -d 'Repetitions per strategy and client count, or per row of --model outage or throttle (3 there unless given)' -r -f
complete -c retry -l net-delay -d 'Mean one-way network delay' -r -f
complete -c retry -l net-sd -d 'Standard deviation of the network delay' -r -f
complete -c retry -l model -d 'The experiment: `occ` is the AWS post\'s (optimistic concurrency on one row); `busy` a server that serves one request at a time and rejects the others at once; `outage` a cron fleet against a service that is down, then back with a limited capacity, under each protection (none, budgets, the circuit breaker); `throttle` a cron fleet or looping clients against a service that throttles (429) past its capacity, under each protection (backoff, throttle-aware backoff, budgets, breakers, the adaptive throttle)' -r -f -a "occ\t'The AWS post\'s: optimistic concurrency on one row (version conflicts)'
busy\t'A server that serves one request at a time and rejects the rest at once'
outage\t'A cron fleet against a service that is down, then back with a limited capacity'
throttle\t'A cron fleet or looping clients against a service that throttles past its capacity'"
complete -c retry -l service-time -d '--model busy: mean time the server takes to serve one request' -r -f
complete -c retry -l service-sd -d '--model busy: standard deviation of the service time' -r -f
complete -c retry -l max-work -d 'Stop a repetition once the server has handled this many requests (its row then counts it under `capped`), or `unlimited`; without backoff, 100,000 clients would take hours' -r -f
complete -c retry -l hosts -d '--model outage: hosts, each running the job on its own schedule' -r -f
complete -c retry -l every -d '--model outage and throttle: how often each host runs the job (as cron does: at a fixed phase of its own, or with --model throttle all at the same mark); with --model throttle also a client\'s pause between its jobs' -r -f
complete -c retry -l outage -d '--model outage: how long the service is down, from the start (every request fails at once)' -r -f
complete -c retry -l capacity -d '--model outage and throttle: requests a second the service serves (after the outage; the rest of each second\'s fail at once, as a 503, or with --model throttle a 429; 20 there unless given)' -r -f
complete -c retry -l capacity-window -d '--model throttle: the service\'s limiter window: it admits --capacity requests in each (shorter than a second only to scale time down, as bench/throttle-live does)' -r -f
complete -c retry -l spawn-time -d '--model throttle: the time each attempt takes to start and end besides the network, a process\'s start-up (bench/throttle-live measures its own)' -r -f
complete -c retry -l span -d '--model outage and throttle: how long the hosts start runs (those running then finish; 20m with --model throttle unless given)' -r -f
complete -c retry -l breaker-afters -d '--model outage: the breaker\'s `--breaker-after` values to compare (counted failures in a row that open a circuit)' -r -f
complete -c retry -l breaker-cooldowns -d '--model outage: the breaker\'s `--breaker-cooldown` values to compare (the first cooldown of an open circuit)' -r -f
complete -c retry -l breaker-cooldown-maxes -d '--model outage: the breaker\'s `--breaker-cooldown-max` values to compare (the longest cooldown failed probes grow it to)' -r -f
complete -c retry -l loads -d '--model throttle: the offered loads to compare, as multiples of --capacity (the first attempts a second the hosts would send if every request succeeded)' -r -f
complete -c retry -l arrivals -d '--model throttle: where the load comes from: `cron`, hosts that all run the job at the same mark of each --every; `clients`, each running its next job --every after its last one ended' -r -f
complete -c retry -l hints -d '--model throttle: whether a 429 carries a Retry-After: `none`, `retry-after` (the time until the capacity frees, in whole seconds)' -r -f
complete -c retry -l error-rate -d '--model throttle: the share of the requests the service admits that fail anyway (a 500: a transient failure), as a percentage' -r -f
complete -c retry -l throttle-bases -d '--model throttle: the throttle bases to compare (a throttled attempt\'s sleep drawn on it instead of --base; none above --cap)' -r -f
complete -c retry -l throttle-ks -d '--model throttle: the adaptive throttle\'s K values to compare (the requests let through per accepted one before any is rejected)' -r -f
complete -c retry -l throttle-windows -d '--model throttle: the adaptive throttle\'s windows to compare (what its counts cover)' -r -f
complete -c retry -l svg -d 'Also draw the post\'s two charts (work and completion time against clients) into this SVG file' -r -F
complete -c retry -s j -l jitter -d 'Backoff strategy of the sleeps between attempts' -r -f -a "none\t'sleep = min(cap, base * factor^n)'
full\t'sleep = random_between(0, min(cap, base * factor^n))'
equal\t't = min(cap, base * factor^n); sleep = t/2 + random_between(0, t/2)'
decorrelated\t'sleep = min(cap, random_between(base, previous sleep * 3))'"
complete -c retry -l splay-stable -d 'Make --splay\'s delay this host\'s own, the same every run'
complete -c retry -s q -l quiet -d 'Log only when giving up'
complete -c retry -s v -l verbose -d 'Also log each attempt\'s start and a first-try success'
complete -c retry -l stdout-once -d 'Only an attempt that succeeds writes to stdout (failed ones: to stderr)'
complete -c retry -l statsd-tags -d 'Give the job and outcome as DogStatsD tags (|#retry_job:…,outcome:…), not in the names'
complete -c retry -s s -l shell -d 'Run COMMAND and ARGS joined with spaces through `/bin/sh -c` (for pipelines; Windows: `cmd /d /s /c`)'
complete -c retry -l plan -d 'Print the sleeps a run with these options would take, and run nothing'
complete -c retry -l simulate -d 'Simulate competing clients as in the AWS post, and run nothing'
complete -c retry -l man -d 'Print the man page (roff) to stdout, and run nothing'
complete -c retry -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -s V -l version -d 'Print version'
