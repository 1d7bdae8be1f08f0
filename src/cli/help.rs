//! The prose around the options, written once for `-h`, `--help` and the
//! man page (`generate`): the usage line, the examples, the environment
//! rule, the value syntax and the exit statuses.

/// The one usage line, in errors, help, man page and README alike.
pub const USAGE: &str = "retry [OPTIONS] [--] COMMAND [ARGS]...";

/// The things people do most, one per situation: (command line, what it does).
pub const EXAMPLES: [(&str, &str); 6] = [
    (
        "retry -- make test",
        "Up to 5 attempts; random sleeps below 1s, 2s, 4s, 8s (full jitter)",
    ),
    (
        "retry --preset curl -- curl -fsS https://example.com/health",
        "Retry 5xx, 429 and network errors; stop at once on any other 4xx",
    ),
    (
        "retry --timeout 30s --max-time 5m -- make deploy",
        "Stop an attempt after 30s (then retry it) and give up after 5 minutes in all",
    ),
    (
        "retry --stdout-once -- curl -fsS https://example.com/items | jq .",
        "Only the attempt that succeeds writes to the pipe",
    ),
    (
        "retry --budget ci -- ./fetch-deps.sh",
        "Share one budget of retries with every retry on this host naming `ci`",
    ),
    (
        "retry --plan -n 6 --base 100ms --cap 2s",
        "Print the sleeps such a run would take, and run nothing",
    ),
];

/// The options no `RETRY_*` variable sets: the modes, which run no
/// command, so no variable can turn a run into something else.
#[cfg(test)]
pub const NOT_FROM_ENVIRONMENT: [&str; 10] = [
    "plan",
    "simulate",
    "completions",
    "man",
    "presets",
    "budget-status",
    "breaker-status",
    "throttle-status",
    "help",
    "version",
];

pub const ENVIRONMENT: &str = "Every option except --plan, --simulate, --completions, --man, \
    --presets, --budget-status, --breaker-status, --throttle-status, --help and --version can also be set with a variable RETRY_<OPTION> (RETRY_BASE=200ms, \
    RETRY_MAX_ATTEMPTS=unlimited); a flag on the command line wins. Switches take 1/0, \
    true/false, yes/no or on/off (RETRY_QUIET=1). An empty variable is as good as unset \
    (a CI template's RETRY_RETRY_IF_OUTPUT= from a variable nobody set changes nothing); an \
    empty value typed after a flag (--retry-if-output '') is refused. The modes are deliberately not read from \
    the environment: a variable never turns a run into one that runs nothing. \
    Under GitHub Actions, a run that retried or gave up adds a table to the step summary \
    (GITHUB_STEP_SUMMARY; RETRY_STEP_SUMMARY=0 turns it off), and RETRY_GITHUB_OUTPUT=1 \
    writes the step outputs total_attempts, exit_code and exit_error to GITHUB_OUTPUT. \
    With OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, retry \
    sends OpenTelemetry spans of the run and of each attempt over OTLP/HTTP when it ends \
    (an http:// endpoint; the OTEL_* headers, timeout, protocol and resource variables \
    apply; an unreachable collector costs at most 2 s and a warning); \
    RETRY_TRACE_COMMAND_ARGS=1 adds the commands' words to them (process.command_args).";

/// The man page's PRESETS section (above the presets themselves).
#[cfg(test)]
pub const PRESETS: &str = "A preset (--preset NAME) sets retry's rules for the way one \
    program reports its failures: which exit codes are transient, which permanent, which \
    messages stop the run and where a server's requested wait is. It is plain flags, shown \
    below as retry --presets NAME prints them (retry --presets prints a table of what each \
    retries and stops on, in words); a rule given as a flag or by its variable wins over \
    the preset's. A give-up line names the preset's rule that stopped the run. \
    Without --preset, a preset is chosen by the command's program (its base name), for the \
    calls the preset claims (its calls key): curl, wget and rsync always; git clone, fetch, \
    pull, push, ls-remote and submodule update; apt-get and apt update, install, upgrade, \
    dist-upgrade, full-upgrade and download; pip and pip3 install and download; npm ci, \
    install (i) and add; docker pull, push and login. Never ssh (its status is the remote \
    command's), docker run, npm test or npm run, git status: there a failure is another \
    program's, retried as without a preset. The program is looked up through env (and its \
    NAME=value words), sudo, nice, nohup, timeout, stdbuf, ionice and time, never inside \
    sh -c, where you name the preset, and a program that is BusyBox or Toybox (found on PATH \
    through its links) is claimed by no built-in preset. A chosen preset ends a run only on a line it \
    recognises, never on an exit code alone: its --fatal-on and --success-on are left out and \
    its --retry-on is added to the default one, since a program of that name may be another \
    (BusyBox's wget exits 1 for every failure) or pass on a script's status (npm install's \
    lifecycle scripts, git push's pre-push hook); named, a preset keeps every rule. -v says which preset judged the run and why; --preset \
    none (RETRY_PRESET=none) turns the lookup off, for a 404 that is expected to become a \
    200. A preset named for a program not in its list (but through a shell) gets one warning. \
    The presets read messages in English: git, wget and apt translate theirs, so run those \
    with LC_ALL=C (LC_ALL=C retry --preset git -- git fetch). \
    Presets for your own tools go in $XDG_CONFIG_HOME/retry/presets.ini (without \
    XDG_CONFIG_HOME, ~/.config/retry/presets.ini): INI sections named after the preset, with \
    the keys programs (the command names it fits, space-separated), calls (the calls it \
    claims for the lookup: * for every call, or first words separated by commas, such as \
    push, submodule update; calls.options, the options before them that take a value), source (the documentation \
    it rests on, required) and the long names of the rules above, one key = value per line \
    and # for comments; RULE.label (stop-if-output.label = an HTTP 4xx) says in a few words \
    what a rule matches, for the give-up line and the table. A built-in name (or none) cannot be taken there, so --preset curl \
    means the same on every machine, but a preset of yours that claims a program's calls is \
    chosen over the built-in one (-v says so); two of yours claiming the same program are \
    an error naming both; retry --presets lists them after the built-in ones. \
    The file is read only if it is a regular file of at most 1 MiB that you or root own and \
    no one else may write, in a directory of the same kind; any other, or one with a mistake \
    in it, is ignored with one warning and the built-in presets still apply.";

pub const COMMAND_SEES: &str = "COMMAND sees RETRY_ATTEMPT (1-based), RETRY_ATTEMPT_LIMIT \
    (the maximum, or `unlimited`), RETRY_PREVIOUS_EXIT_CODE (unset on the first attempt) and \
    RETRY_RUN_IDS (the runs of retry it descends from: only their descendants are ever \
    stopped); --on-retry's command sees RETRY_ATTEMPT, RETRY_ATTEMPT_LIMIT, RETRY_EXIT_CODE \
    (and RETRY_PREVIOUS_EXIT_CODE, the same: the attempt that just failed) and RETRY_RUN_IDS; \
    --on-start's and --on-exit's see RETRY_COMMAND (the command's name in the log lines), \
    RETRY_ATTEMPT_LIMIT and RETRY_RUN_IDS, and --on-exit's also RETRY_OUTCOME, RETRY_REASON, \
    RETRY_EXIT_CODE (retry's own exit status), RETRY_ATTEMPTS and RETRY_ELAPSED_MS. \
    None of these configure a retry nested inside. None of them sees RETRY_STORE or its old \
    spelling RETRY_BUDGET_STORE (they may hold the fleet's password), RETRY_ON_START or \
    RETRY_ON_EXIT (a retry nested inside would ping the same monitor): a retry nested inside \
    that is to share the fleet's budget, breaker or throttle is given the store again. When traces \
    are sent, COMMAND also sees TRACEPARENT naming its attempt's span (TRACESTATE passed \
    on), and the hooks the run's span; otherwise TRACEPARENT passes through untouched.";

pub const DURATION: &str = "DURATION: a number with a unit, as in 250ms, 1s, 1.5s, 2m 30s, \
    1h. A bare number is refused with a hint: a wrong guess between seconds and milliseconds \
    is off by a factor of 1000.";

pub const CODES: &str = "CODES: exit codes and inclusive ranges, 0 to 255 (Windows: any \
    32-bit code, as 0xC0000005 or -1), in decimal or 0x hex, separated by commas: \
    1,2,75-78,124. A code is judged in this order: --success-on (stop, success), \
    --fatal-on (stop), --retry-on (retry), anything else (stop).";

/// (status, when).
pub const EXIT_STATUS: [(&str, &str); 10] = [
    (
        "the command's",
        "its success or stopping code, or the last attempt's when attempts, time or --budget run out",
    ),
    (
        "1",
        "attempts ran out while a success code's output still matched --retry-if-output",
    ),
    ("2", "bad usage: nothing ran"),
    (
        "75",
        "the --breaker circuit is open, or --throttle rejected every attempt: COMMAND was not \
         started (EX_TEMPFAIL: try again later; --breaker-exit-code sets another, to tell it \
         from COMMAND's own 75)",
    ),
    (
        "124",
        "the last attempt timed out (--timeout, or --max-time during an attempt)",
    ),
    (
        "125",
        "retry itself failed: an input or output it could not carry whole, or the last \
         attempt could not be started for want of processes, file descriptors or memory \
         (retried like a failure)",
    ),
    ("126", "COMMAND exists but cannot be run"),
    ("127", "COMMAND was not found"),
    ("128+N", "COMMAND was killed by signal N"),
    (
        "0xC000013A",
        "Windows, for 128+N: Ctrl-C, Ctrl-Break or a closed console stopped retry",
    ),
];

/// After `-h`: the examples and where the rest is.
pub fn short_after() -> String {
    format!(
        "{}\nEvery option, the environment and exit statuses: retry --help, or man retry",
        examples()
    )
}

/// After `--help`: everything the options table does not say.
pub fn long_after() -> String {
    let status: String = EXIT_STATUS
        .iter()
        .map(|(code, when)| format!("  {code:<14} {when}\n"))
        .collect();
    format!(
        "{}\nEnvironment:\n  {ENVIRONMENT}\n  {COMMAND_SEES}\n\n{DURATION}\n{CODES}\n\n\
         Exit status:\n{status}",
        examples()
    )
}

fn examples() -> String {
    let mut text = String::from("Examples:\n");
    for (command, what) in EXAMPLES {
        text.push_str(&format!("  {command}\n      {what}\n"));
    }
    text
}
