
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
            cand -j 'Backoff strategy for the sleep between attempts (`all` only with --simulate)'
            cand --jitter 'Backoff strategy for the sleep between attempts (`all` only with --simulate)'
            cand -b 'Base delay: the first sleep''s ceiling'
            cand --base 'Base delay: the first sleep''s ceiling'
            cand -c 'The largest sleep'
            cand --cap 'The largest sleep'
            cand -f 'Growth of the ceiling per attempt for none/full/equal (1 keeps it constant)'
            cand --factor 'Growth of the ceiling per attempt for none/full/equal (1 keeps it constant)'
            cand -n 'Total runs of COMMAND, the first included, or `unlimited`'
            cand --max-attempts 'Total runs of COMMAND, the first included, or `unlimited`'
            cand --retry-on 'Exit codes that are retried; any other failing code stops at once [default: every code that is not a success, except 126 and 127 (the command cannot run) and 141 (killed by SIGPIPE: its reader went away)]'
            cand --fatal-on 'Exit codes that stop at once, even if --retry-on covers them'
            cand --success-on 'Exit codes that count as success'
            cand -t 'Limit for one attempt; on expiry the command and its descendants get SIGTERM, then SIGKILL after --kill-after, and the attempt counts as exit code 124'
            cand --timeout 'Limit for one attempt; on expiry the command and its descendants get SIGTERM, then SIGKILL after --kill-after, and the attempt counts as exit code 124'
            cand --kill-after 'Grace between SIGTERM and SIGKILL when an attempt is stopped'
            cand -m 'Limit for the whole run: a sleep that would end past it is not taken, and at the limit the running attempt is stopped as by --timeout'
            cand --max-time 'Limit for the whole run: a sleep that would end past it is not taken, and at the limit the running attempt is stopped as by --timeout'
            cand --seed 'Fixed random seed, for reproducible schedules and tests only: clients sharing a seed sleep in lockstep, which defeats jitter'
            cand --log-format 'How retry''s own log lines are written'
            cand --log-file 'Append retry''s own log lines to this file instead of stderr, which then carries only the command''s (`--log-file /dev/fd/3` for a descriptor the shell opened); created readable by its owner only. A file, a character device or a pipe; a FIFO must have its reader already, as retry never waits to open its log. A symlink is followed only if you or root own it'
            cand --on-retry 'Shell command run with `sh -c` after a failed attempt, before the sleep (cleanup); it sees RETRY_ATTEMPT and RETRY_EXIT_CODE, its output goes to stderr, and its failure is logged, not fatal'
            cand --stdin 'What each attempt reads as stdin: `inherit` retry''s own (a later attempt may find it already consumed), `replay` the same bytes every time, or `null` an empty one'
            cand --stdin-limit 'With --stdin replay: the most bytes of stdin kept to replay (past 64 MiB in a temporary file under TMPDIR). The attempt reading a longer stdin as it comes still gets all of it; a retry that would need more than was kept (or than a full disk kept) is not run: exit status 125 rather than feed any attempt a truncated input'
            cand --retry-if-output 'Retry an attempt whose stdout or stderr has a line matching REGEX, even if its exit code counts as success (it then counts as 1; not if the code is fatal); \d \w \s and (?i) are ASCII-only. Lines are matched whole up to 1 MiB; a longer one only by a match that ends in its first 1 MiB, where `$` does not match'
            cand --stop-if-output 'Stop the run at once, with the attempt''s own status, when its stdout or stderr has a line matching REGEX (lines as for --retry-if-output)'
            cand --delay-from-output 'Read the server''s wait from the output: a line matching REGEX (lines as for --retry-if-output) with one capture group holding seconds (`120`, `1.5`), a duration (`250ms`) or an HTTP-date. The sleep after that failed attempt is then at least the hint; a hint longer than --cap, or one that would end past --max-time, gives up rather than come back sooner than asked. Example: ''(?i)^retry-after:\s*(.+)$'''
            cand --budget 'Share one retry budget with every retry on this host that names it: a retry costs tokens, and when the budget cannot pay retry gives up at once with the command''s last status (first attempts always run). A budget that cannot be used safely (a directory another user owns or may write, a symlink) is skipped with a warning'
            cand --budget-tokens 'The budget''s size, and what a full one holds (AWS SDK retry quota: 500)'
            cand --budget-cost 'Tokens one retry costs, twice that after a timeout; a success after retries gives the last one''s cost back, a first-try success 1 token'
            cand --budget-refill 'Tokens the budget regains per second (0: only successes refill it)'
            cand --preset 'Judge failures as one program reports them (retry --presets shows the rules)'
            cand --foreground 'Whether the command stays in retry''s process group (so it can read the terminal, and job control stops and continues both) or gets a process group of its own (so timeouts and signals reach all its descendants); `auto` keeps it in retry''s group when stdin is a terminal'
            cand --completions 'Print a completion script for SHELL to stdout, and run nothing'
            cand --budget-status 'Print the state of the shared retry budget NAME, and run nothing'
            cand --format 'Output of --plan and --simulate'
            cand --clients 'Client counts, as counts and ranges with a step (`1,2,5,10-190:10`)'
            cand --reps 'Repetitions per strategy and client count'
            cand --net-delay 'Mean one-way network delay'
            cand --net-sd 'Standard deviation of the network delay'
            cand --model 'The experiment: `occ` is the AWS post''s (optimistic concurrency on one row); `busy` a server that serves one request at a time and rejects the others at once'
            cand --service-time '--model busy: mean time the server takes to serve one request'
            cand --service-sd '--model busy: standard deviation of the service time'
            cand --max-work 'Stop a repetition once the server has handled this many requests (its row then counts it under `capped`), or `unlimited`; without backoff, 100,000 clients would take hours'
            cand --svg 'Also draw the post''s two charts (work and completion time against clients) into this SVG file'
            cand -q 'Log only when giving up'
            cand --quiet 'Log only when giving up'
            cand -v 'Also log each attempt''s start and a first-try success'
            cand --verbose 'Also log each attempt''s start and a first-try success'
            cand --stdout-once 'Hold back each attempt''s stdout (in memory, then in a temporary file) and write only an attempt that succeeds to stdout; the stdout of every failed attempt goes to stderr, the last one''s too when retry gives up, so a pipe downstream sees nothing of a failed run; a signal during an attempt drops its held-back stdout, saying how much. Output that cannot be held back or written stops the run with exit status 125'
            cand -s 'Run COMMAND and ARGS joined with spaces through `/bin/sh -c` (for pipelines)'
            cand --shell 'Run COMMAND and ARGS joined with spaces through `/bin/sh -c` (for pipelines)'
            cand --plan 'Print the sleeps a run with these options would take, and run nothing'
            cand --simulate 'Simulate competing clients as in the AWS "Exponential Backoff And Jitter" post (work and completion time per strategy), and run nothing. Without --base/--cap it uses the post''s: 10ms (5ms for decorrelated), 2s'
            cand --man 'Print the man page (roff) to stdout, and run nothing'
            cand --presets 'Print every preset as the plain flags it stands for, with the documentation it rests on, and run nothing'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
