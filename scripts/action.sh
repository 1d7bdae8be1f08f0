#!/usr/bin/env bash
# The GitHub Action's one script (action.yml at the repository's root):
# checks the inputs, installs retry, runs the command under it and sets the
# step outputs. The inputs come as INPUT_<NAME> variables, GitHub's own
# convention, so it runs (and is tested, tests/integration/action.rs)
# outside GitHub with them set.
#
# Inputs: nick-fields/retry's, under their names and meanings (timeout_minutes,
# timeout_seconds, max_attempts, command, retry_wait_seconds, shell,
# polling_interval_seconds, retry_on, retry_on_exit_code, warning_on_retry,
# on_retry_command, continue_on_error, new_command_on_retry), then retry's own
# (jitter, base, cap, factor, max_time, kill_after, success_on, fatal_on,
# retry_if_output, stop_if_output, delay_from_output, preset, budget,
# breaker, metrics_dir, store and its older name budget_store). A bad one
# of the script's own is one line naming it, exit 2, before anything is
# downloaded or run; retry's own are checked by retry's parsers as it
# starts, before anything runs (a refusal: retry's one line, exit 2), and
# retry goes on PATH only once they passed. Either way the outputs say so.
# Once read, every INPUT_* variable is removed: no build, attempt or hook
# sees one (a store's password among them).
#
# The job's RETRY_* variables, retry's settings for its plain `run:` steps,
# never reach the Action's retry: its run has the settings its inputs give
# (below, the few it keeps, and how the command gets them back).
#
# Install: the release archive for RUNNER_OS/RUNNER_ARCH from the job's
# RETRY_INSTALL_FROM (a mirror: the place that holds the release's files by
# their own names; one without them is an error), else from
# RETRY_ACTION_REPOSITORY/releases/download/TAG (action.yml derives
# SERVER/OWNER/REPO from the github context; a test gives its loopback
# server): TAG is RETRY_ACTION_REF, or for a 40-hex SHA pin the release tag
# that points at it (git ls-remote --tags, no token; recorded for the job's
# next use). Checked against its .sha256 before it is unpacked, kept in
# RUNNER_TOOL_CACHE/retry/VERSION/TARGET (or RUNNER_TEMP) with its checksum
# for the next use (which runs it only if it is still this user's, no one
# else can write it or RUNNER_TEMP, and its checksum is the recorded one)
# and put on GITHUB_PATH. Without a RUNNER_TEMP that is this user's own, a
# fresh private directory (mktemp -d), removed when the step ends and
# never put on PATH: never a fixed name in a shared directory. Without a
# release for the ref (a branch, a commit no tag points at, a fork, `uses:
# ./`), retry is built, saying why, from the action's own checkout
# (RETRY_ACTION_PATH) with cargo ($CARGO if set). Nothing is fetched from
# anywhere else. RETRY_INSTALL_TIMEOUT bounds each download as a whole, in
# seconds (1 to 999999999, default 300), as for scripts/install.sh; a
# download that fails says why in curl's terms (timed out, cut short,
# cannot connect).
#
# A cached start (the job's second use) runs four programs: one find (who
# owns what, and who can write it), one cksum (the copy is the one
# installed), retry and the command's shell; everything else is bash's
# own (bench/action.sh measures it against the script before these
# checks).
#
# Outputs: total_attempts, exit_code, exit_error (nick-fields' words) and
# reason (retry's), written by retry itself at the end of the run
# (RETRY_GITHUB_OUTPUT=1: src/sinks/summary.rs), so they are the run's
# own figures; by this script on every other way out: a bad input (0
# attempts, exit code 2), a failed install (0 attempts, exit code 1), each
# with the line shown.
# Bash 3.2 and BSD tools (macOS), Git Bash (Windows).
set -u

nl=$'\n'

# A value in single quotes, for sh and bash to read back as it is (each '
# as '\''), in $quoted: no subshell, no pattern substitution (whose quoting
# differs between bash 3.2 and 5.2).
quote() { # VALUE
    local rest=$1 head read=''
    while :; do
        case $rest in
        *\'*)
            head=${rest%%\'*}
            read="$read$head'\\''"
            rest=${rest#*\'}
            ;;
        *) break ;;
        esac
    done
    quoted="'$read$rest'"
}

# ---- the job's RETRY_* variables ----
# A job's `env:` may set RETRY_* for the retry of its plain `run:` steps
# (RETRY_MAX_ATTEMPTS, RETRY_QUIET, RETRY_PRESET, RETRY_LOG_FILE, ...):
# none may change the Action's run. Each is removed before anything else,
# but
# - RETRY_INSTALL_FROM and RETRY_INSTALL_TIMEOUT: the job's mirror and
#   download bound, for the install below (retry does not read them);
# - RETRY_STEP_SUMMARY: =0 turns the job summary off, for every retry of
#   the job (docs/guide.md);
# - RETRY_RUN_IDS: no setting, the mark by which an outer retry knows its
#   processes (src/run/lineage.rs);
# - action.yml's RETRY_ACTION_REF, _REPOSITORY and _PATH (read below).
# The command and on_retry_command get them back (as the command of a
# `run: retry ...` step sees the job's, and a retry it runs takes them),
# by RETRY_ACTION_JOB_ENV, which they read and remove before anything
# else (on Windows, where retry runs the hook with cmd, the command
# only): not the ones retry sets for each attempt itself, nor those it
# keeps from every attempt and hook (a store's, which may hold a
# password; the Action's own RETRY_GITHUB_*).
# Windows reads a variable's name whatever its case (retry.exe takes a
# job's Retry_Quiet for RETRY_QUIET): there every name that starts with
# R or r is looked at in capitals (bash 4's ${name^^}: Git Bash is bash 5;
# no subshell, so no fork).
job_env=
for name in ${!R@} ${!r@}; do
    key=$name
    [ "${RUNNER_OS:-}" = Windows ] && key=${name^^}
    case $key in
    RETRY_*) ;;
    *) continue ;;
    esac
    case $key in
    RETRY_INSTALL_FROM | RETRY_INSTALL_TIMEOUT | RETRY_STEP_SUMMARY | RETRY_RUN_IDS | \
        RETRY_ACTION_REF | RETRY_ACTION_REPOSITORY | RETRY_ACTION_PATH)
        continue
        ;;
    RETRY_ACTION_* | RETRY_GITHUB_* | RETRY_STORE | RETRY_BUDGET_STORE | RETRY_ATTEMPT | \
        RETRY_ATTEMPT_LIMIT | RETRY_PREVIOUS_EXIT_CODE | RETRY_EXIT_CODE) ;;
    *)
        quote "${!name}"
        job_env="${job_env}export $name=$quoted$nl"
        ;;
    esac
    unset "$name"
done

# One line: a line end in an input's value is shown as a space.
say() {
    local line="$*"
    printf 'retry action: %s\n' "${line//[[:cntrl:]]/ }" >&2
}
# A notice: an annotation under GitHub Actions, a line elsewhere.
notice() {
    local line="$*" percent=%
    line=${line//[[:cntrl:]]/ }
    if [ "${GITHUB_ACTIONS:-}" = true ]; then
        printf '::notice title=retry action::%s\n' "${line//"$percent"/%25}" >&2
    else
        printf 'retry action: notice: %s\n' "$line" >&2
    fi
}
# Whether the file that the variable NAME names is one to append to: set,
# and no FIFO, which would hold the step until someone reads it (retry
# does not wait for a reader either).
appendable() { # NAME
    local file=${!1:-}
    [ -n "$file" ] || return 1
    if [ -p "$file" ]; then
        say "warning: $1 is a FIFO ($file): nothing written to it"
        return 1
    fi
}
# The step outputs, for a run that ended before retry could write them:
# a later step that reads them never gets empty strings. One line each (a
# line end in an input's value must not start an output of its own).
outputs() { # TOTAL_ATTEMPTS EXIT_CODE WHY
    appendable GITHUB_OUTPUT || return 0
    local why=$3
    why=${why//[[:cntrl:]]/ }
    { printf 'total_attempts=%s\nexit_code=%s\nexit_error=%s\nreason=%s\n' \
        "$1" "$2" "$why" "$why" >>"$GITHUB_OUTPUT"; } 2>/dev/null ||
        say "warning: cannot write the step outputs to $GITHUB_OUTPUT"
}
# A bad input: one line naming it, exit 2, nothing downloaded or run, and
# the outputs say so (no attempt).
bad() {
    say "$*"
    outputs 0 2 "$*"
    exit 2
}
# Any other way out before retry runs (an install that failed): one line,
# exit 1, and the outputs say so.
die() {
    say "$*"
    outputs 0 1 "$*"
    exit 1
}
# A URL as messages show it: everything between :// and its last @ (a
# private mirror's user and password, which may hold / ? # @ :) becomes
# ***, the rule retry's own messages follow (src/state/store/mod.rs's
# hidden); without a ://, everything before the last @.
shown() {
    case $1 in
    *://*@*) printf '%s://***@%s\n' "${1%%://*}" "${1##*@}" ;;
    *@*) printf '***@%s\n' "${1##*@}" ;;
    *) printf '%s\n' "$1" ;;
    esac
}

is_whole() {
    case $1 in
    '' | *[!0-9]*) return 1 ;;
    esac
}
# A whole number from 1 to MAX (9 digits at most), by its digits: the
# shell's own test prints a line of its own past 64 bits.
is_count() { # VALUE MAX
    local digits=$1
    is_whole "$digits" || return 1
    while [ "${digits#0}" != "$digits" ]; do digits=${digits#0}; done
    [ -n "$digits" ] && [ ${#digits} -le 9 ] && [ "$digits" -le "$2" ]
}
# Digits, with a decimal part or not: 2, 2.5.
is_decimal() {
    is_whole "${1%%.*}" && { [ "$1" = "${1%%.*}" ] || is_whole "${1#*.}"; }
}

# ---- the job's earlier install, checked while the inputs are read ----
windows=false
[ "${RUNNER_OS:-}" = Windows ] && windows=true
binary=retry
[ "$windows" = true ] && binary=retry.exe
# A relative RUNNER_TEMP (never GitHub's) made absolute: no path below
# starts with a - that a program would take for an option.
case ${RUNNER_TEMP:-} in
'' | /*) ;;
*) [ "$windows" = true ] || RUNNER_TEMP=$PWD/$RUNNER_TEMP ;;
esac
# And by its real path, through its symbolic links (cd -P, a builtin): a
# link another user can point elsewhere is neither what the checks below
# look at nor what goes on GITHUB_PATH.
if [ "$windows" = false ] && [ -d "${RUNNER_TEMP:-}" ]; then
    here=$PWD
    if builtin cd -P -- "$RUNNER_TEMP" 2>/dev/null; then
        RUNNER_TEMP=$PWD
        builtin cd -- "$here" || exit 1
    fi
fi

# ---- names: the rule scripts/install.sh and release.yml share ----
# The release's name for a runner: target_for RUNNER_OS RUNNER_ARCH, then
# archive_for VERSION TARGET (scripts/dist.sh's and release.yml's names;
# musl on x86_64 Linux, as scripts/install.sh and the README choose).
# Each prints the name and leaves it in $target or $archive: called with
# its output sent to /dev/null, it costs no subshell.
target_for() {
    case "$1 $2" in
    "Linux X64") target=x86_64-unknown-linux-musl ;;
    "Linux ARM64") target=aarch64-unknown-linux-gnu ;;
    "macOS ARM64") target=aarch64-apple-darwin ;;
    "macOS X64") target=x86_64-apple-darwin ;;
    "Windows X64") target=x86_64-pc-windows-msvc ;;
    *) return 1 ;;
    esac
    echo "$target"
}
archive_for() {
    case $2 in
    *-windows-*) archive="retry-$1-$2.zip" ;;
    *) archive="retry-$1-$2.tar.gz" ;;
    esac
    echo "$archive"
}
# ---- end of names ----

# The SHA-256 of FILE, in hex, into $sum: the archive's, against the
# release's .sha256.
sha256() { # FILE
    if command -v sha256sum >/dev/null 2>&1; then
        sum=$(sha256sum <"$1")
    else
        sum=$(shasum -a 256 <"$1") # macOS
    fi
    sum=${sum%% *}
}
# The copy's checksum as installed, kept beside it (retry.cksum) for the
# job's next use to compare: POSIX cksum's CRC and size, which crc
# prints (in place of the subshell it is called in: exec, no further
# process) and crc_of reads into $sum. Not SHA-256, which costs 4 to 8 ms
# of CPU a start for 2 MB (bench/action.sh), against 1 ms: the record
# lies beside the copy, owned and writable as it is, so whoever could
# change the copy (this user, root: find's check keeps everyone else
# out) could change the record too, and no hash of any strength would
# stop them. What it catches, a copy that is not the one installed (cut
# short, corrupted, another build copied over it), a CRC and the size
# catch as well; the download itself was checked against the release's
# SHA-256 when it was installed.
crc() { # FILE
    exec cksum <"$1"
}
crc_of() { # OUTPUT
    local words
    # shellcheck disable=SC2206 # split on purpose: digits and blanks only
    words=(${1//[!0-9]/ })
    sum="${words[0]-} ${words[1]-}"
    [ ${#words[@]} -eq 2 ]
}

# Whether each PATH is of its kind and no other user can change it: owned
# by this user or root, writable by neither group nor others. Kinds: d, a
# directory, f, a regular file, neither a symbolic link; D, a directory or
# a symbolic link to one, whose directory is checked (RUNNER_TEMP). kinds
# checks the kinds (bash's own tests) and leaves find's arguments in
# $paths and the lines it prints when every path passes in $expected;
# mine runs that find, one for them all. NTFS has no such modes (Git Bash
# shows every file as the user's): on Windows, RUNNER_TEMP's own ACL is
# relied on.
owned=(-prune \( -user "$EUID" -o -user 0 \) ! -perm -020 ! -perm -002 -print)
kinds() { # KIND PATH [KIND PATH]...
    local path
    paths=() expected=''
    while [ $# -ge 2 ]; do
        path=$2
        case $1 in
        d) [ -d "$path" ] && ! [ -L "$path" ] ;;
        f) [ -f "$path" ] && ! [ -L "$path" ] ;;
        *) [ -d "$path" ] ;;
        esac || return 1
        # Never one of find's own words (-name, !, a relative path).
        case $path in /*) ;; *) path=./$path ;; esac
        paths+=("$path")
        expected=$expected$path$nl
        shift 2
    done
}
mine() { # KIND PATH [KIND PATH]...
    kinds "$@" || return 1
    [ "$windows" = true ] && return 0
    [ "$(find -H "${paths[@]}" "${owned[@]}" 2>/dev/null)$nl" = "$expected" ]
}
# Whether DIR is this user's or root's with the sticky bit (as /tmp):
# others may write in it but not move or remove what this user made.
sticky() { # DIR
    case $1 in /*) ;; *) return 1 ;; esac
    [ -n "$(find -H "$1" -prune -type d \( -user "$EUID" -o -user 0 \) -perm -1000 -print 2>/dev/null)" ]
}

# Whether TAG names a release: v followed by its version (a file name and
# a path below).
release_tag() { # TAG
    case $1 in
    v | v[0-9]*[!0-9A-Za-z._+-]* | v[!0-9]* | [!v]*) return 1 ;;
    esac
}

# Where the job's first use left retry, if it did, for the next use to
# run at the cost of two programs: into $cache, and into $checks every
# path that use relies on (RUNNER_TEMP and its retry-action, the tool
# cache's directories if used, the copy and its recorded checksum, a SHA
# pin's recorded tag). Only when the release's tag is known without
# asking anyone (the ref, or what the first use found for a SHA pin);
# anything else is install's to do, and to say why.
candidate() {
    local ref=${RETRY_ACTION_REF:-} tools=${RUNNER_TOOL_CACHE:-} tag='' work
    [ -n "${RUNNER_TEMP:-}" ] && [ -n "$ref" ] &&
        target_for "${RUNNER_OS:-}" "${RUNNER_ARCH:-}" >/dev/null || return 1
    work=$RUNNER_TEMP/retry-action
    checks=(D "$RUNNER_TEMP" d "$work")
    case $ref in
    *[!0-9a-f]*) tag=$ref ;;
    *)
        # Read once no one else can change it (a FIFO would hold bash).
        [ ${#ref} -eq 40 ] && [ -f "$work/commit-$ref" ] &&
            mine D "$RUNNER_TEMP" d "$work" f "$work/commit-$ref" || return 1
        read -r tag _ <"$work/commit-$ref" || [ -n "$tag" ] || return 1
        checks+=(f "$work/commit-$ref")
        ;;
    esac
    release_tag "$tag" || return 1
    version=${tag#v}
    if [ -n "$tools" ] && [ -d "$tools/retry/$version" ]; then
        cache=$tools/retry/$version/$target
        checks+=(d "$tools" d "$tools/retry" d "$tools/retry/$version")
    else
        cache=$work/$version-$target
    fi
    checks+=(d "$cache" f "$cache/$binary" f "$cache/$binary.cksum")
}
# Both programs start now, in the background, on descriptors 8 (find)
# and 9 (the checksum), and take the time bash spends on the inputs; fast
# reads their answers before anything runs, and nothing runs with those
# descriptors open. A file swapped for a FIFO meanwhile would hold the
# checksum's program, never this script, and fails find's check (on
# Windows, which has no find check, both run when fast asks).
# Neither sees an input (a store's password among them).
unset_inputs() {
    local name
    for name in ${!INPUT_@}; do unset "$name"; done
}
early=false early_expected=''
if [ "$windows" = false ] && candidate && kinds "${checks[@]}"; then
    exec 8< <(unset_inputs && exec find -H "${paths[@]}" "${owned[@]}" 2>/dev/null </dev/null)
    exec 9< <(unset_inputs && crc "$cache/$binary" 2>/dev/null)
    early=true early_expected=$expected
fi

# ---- the inputs ----
command=${INPUT_COMMAND:-}
case $command in
*[![:space:]]*) ;;
*) bad "command: empty; give the command to run" ;;
esac
new_command=${INPUT_NEW_COMMAND_ON_RETRY:-}
minutes=${INPUT_TIMEOUT_MINUTES:-}
seconds=${INPUT_TIMEOUT_SECONDS:-}
attempts=${INPUT_MAX_ATTEMPTS:-}
wait_seconds=${INPUT_RETRY_WAIT_SECONDS:-}
polling=${INPUT_POLLING_INTERVAL_SECONDS:-}
retry_on=${INPUT_RETRY_ON:-any}
exit_code_input=${INPUT_RETRY_ON_EXIT_CODE:-}
# true or false in any case, as nick-fields reads it; anything else is
# refused, as there. Unset or empty: false.
case ${INPUT_CONTINUE_ON_ERROR:-false} in
[Tt][Rr][Uu][Ee]) continue_on_error=true ;;
[Ff][Aa][Ll][Ss][Ee]) continue_on_error=false ;;
*) bad "continue_on_error: '$INPUT_CONTINUE_ON_ERROR' is not true or false" ;;
esac
# As nick-fields reads it: true in any case is true, any other word false
# (a notice says so for one that is neither). Unset (outside GitHub):
# action.yml's default, true.
case ${INPUT_WARNING_ON_RETRY-true} in
[Tt][Rr][Uu][Ee]) warning_on_retry=true ;;
[Ff][Aa][Ll][Ss][Ee]) warning_on_retry=false ;;
*)
    warning_on_retry=false
    notice "warning_on_retry: '$INPUT_WARNING_ON_RETRY' is neither true nor false: read as false (retries as plain lines), as nick-fields/retry reads it"
    ;;
esac

flags=()
if [ -n "$minutes" ] && [ -n "$seconds" ]; then
    bad "timeout_minutes and timeout_seconds: give one of them, not both"
fi
# Decimals too (1.5 minutes is 90 s), as retry's --timeout 1.5m.
if [ -n "$minutes" ]; then
    is_decimal "$minutes" || bad "timeout_minutes: '$minutes' is not a number of minutes"
    flags+=(--timeout "${minutes}m")
elif [ -n "$seconds" ]; then
    is_decimal "$seconds" || bad "timeout_seconds: '$seconds' is not a number of seconds"
    flags+=(--timeout "${seconds}s")
fi
if [ -n "$attempts" ]; then
    case $attempts in
    unlimited) ;;
    *) is_count "$attempts" 999999999 ||
        bad "max_attempts: '$attempts' is not a number of attempts (1 to 999999999, or unlimited)" ;;
    esac
    flags+=(--max-attempts "$attempts")
fi
# nick-fields' wait: the same number of seconds after every failure.
if [ -n "$wait_seconds" ]; then
    is_decimal "$wait_seconds" || bad "retry_wait_seconds: '$wait_seconds' is not a number of seconds"
    if [ -n "${INPUT_JITTER:-}${INPUT_BASE:-}${INPUT_CAP:-}${INPUT_FACTOR:-}" ]; then
        bad "retry_wait_seconds: a constant wait; give it or jitter/base/cap/factor, not both"
    fi
    flags+=(--jitter none --factor 1 --base "${wait_seconds}s" --cap "${wait_seconds}s")
fi
# retry waits for the command itself: there is no polling to tune.
if [ -n "$polling" ]; then
    is_decimal "$polling" || bad "polling_interval_seconds: '$polling' is not a number of seconds"
fi
# Which codes are retried. nick-fields retries every non-zero exit, 126
# and 127 (a tool not installed yet) included, where retry's own default
# does not; a preset keeps its own judgement, and with success_on retry's
# default applies (a code cannot be both retried and a success). A
# timed-out attempt counts as exit code 124 (as for coreutils timeout).
# output, this Action's own: no exit code is retried, only an attempt
# whose output matches retry_if_output (--retry-on none).
every=1-255
[ "$windows" = true ] && every=1-0xFFFFFFFF # any 32-bit code, as unsigned
retry_codes=$every fatal_codes=${INPUT_FATAL_ON:-}
[ -n "${INPUT_PRESET:-}${INPUT_SUCCESS_ON:-}" ] && retry_codes=
case $retry_on in
any | success) ;; # nick-fields lists success, and treats it as any
timeout) retry_codes=124 ;;
error) fatal_codes=124${fatal_codes:+,$fatal_codes} ;;
output)
    [ -n "${INPUT_RETRY_IF_OUTPUT:-}" ] ||
        bad "retry_on: output retries only an attempt whose output matches retry_if_output; give retry_if_output"
    retry_codes=none
    ;;
*) bad "retry_on: '$retry_on' is not any, timeout, error, output or success" ;;
esac
if [ -n "$exit_code_input" ]; then
    # nick-fields ignores 0 (no code to retry: 0 is a success); so does
    # this, rather than ask retry for a --retry-on 0 no one wrote.
    if is_whole "$exit_code_input" && [ -z "${exit_code_input//0/}" ]; then
        notice "retry_on_exit_code: '$exit_code_input' is ignored, as nick-fields/retry ignores it (0 is a success, never retried)"
    else
        is_count "$exit_code_input" 255 ||
            bad "retry_on_exit_code: '$exit_code_input' is not an exit code (0 to 255)"
        [ "$retry_on" = timeout ] &&
            bad "retry_on_exit_code: retries only that code, and retry_on: timeout only timeouts; give one"
        [ "$retry_on" = output ] &&
            bad "retry_on_exit_code: retries that code, and retry_on: output only what retry_if_output matches; give one"
        retry_codes=$exit_code_input
    fi
fi
if [ -n "$retry_codes" ]; then flags+=(--retry-on "$retry_codes"); fi
if [ -n "$fatal_codes" ]; then flags+=(--fatal-on "$fatal_codes"); fi
# How retry's GitHub lines read (src/sinks/log/action.rs), as nick-fields'
# do: each attempt's output folded; retries as warnings, or plain lines
# ("info"); giving up an error, or a warning when the step ends green.
wishes=groups
[ "$warning_on_retry" = false ] && wishes=$wishes,plain-retries
[ "$continue_on_error" = true ] && wishes=$wishes,give-up-warning
# retry's own, as its flags; retry checks them (a bad one: exit 2, nothing runs).
# FLAG=VALUE, one word: a value that starts with - (a regex such as
# '--- FAIL' or '-ERR') is the flag's, not an option of its own.
own() { # FLAG VALUE
    if [ -n "$2" ]; then flags+=("$1=$2"); fi
}
# The hook gives itself the job's RETRY_* back first (above; sh reads it,
# but on Windows, where retry runs it with cmd).
hook=${INPUT_ON_RETRY_COMMAND:-}
if [ -n "$hook" ] && [ -n "$job_env" ] && [ "$windows" = false ]; then
    # shellcheck disable=SC2016 # expanded by the hook's sh
    hook='eval "$RETRY_ACTION_JOB_ENV"; unset RETRY_ACTION_JOB_ENV; '$hook
fi
own --on-retry "$hook"
own --jitter "${INPUT_JITTER:-}"
own --base "${INPUT_BASE:-}"
own --cap "${INPUT_CAP:-}"
own --factor "${INPUT_FACTOR:-}"
own --max-time "${INPUT_MAX_TIME:-}"
own --kill-after "${INPUT_KILL_AFTER:-}"
own --success-on "${INPUT_SUCCESS_ON:-}"
own --retry-if-output "${INPUT_RETRY_IF_OUTPUT:-}"
own --stop-if-output "${INPUT_STOP_IF_OUTPUT:-}"
own --delay-from-output "${INPUT_DELAY_FROM_OUTPUT:-}"
# No preset unless one is named: the Action runs a shell line, as
# nick-fields' does, and a presets file must not change what it retries.
own --preset "${INPUT_PRESET:-none}"
own --budget "${INPUT_BUDGET:-}"
own --breaker "${INPUT_BREAKER:-}"
own --metrics-dir "${INPUT_METRICS_DIR:-}"
# The store the budget and the breaker share (budget_store: its older
# name). Its password stays off the command line: by its variable, set
# for retry alone (no download or build sees it), which retry keeps from
# the command and the hook.
store=${INPUT_STORE:-${INPUT_BUDGET_STORE:-}}
if [ -n "${INPUT_STORE:-}" ] && [ -n "${INPUT_BUDGET_STORE:-}" ] &&
    [ "$INPUT_STORE" != "$INPUT_BUDGET_STORE" ]; then
    bad "store and budget_store: the same setting by two names; give one"
fi

# A path a native Windows program (retry.exe) understands, into the
# variable NAME.
native() { # NAME PATH
    if [ "$windows" = true ] && command -v cygpath >/dev/null 2>&1; then
        printf -v "$1" '%s' "$(cygpath -w "$2")"
    else
        printf -v "$1" '%s' "$2"
    fi
}
# Where PATH finds the program NAME, into the variable VARIABLE: from
# bash's own table (no subshell), or command -v where bash has no
# BASH_CMDS (3.2).
lookup() { # VARIABLE NAME
    local path=
    if hash "$2" 2>/dev/null; then path=${BASH_CMDS[$2]-}; fi
    [ -n "$path" ] || path=$(command -v "$2" 2>/dev/null) || return 1
    printf -v "$1" '%s' "$path"
}

# The shell, as nick-fields runs it: SHELL -c COMMAND (cmd: /d /s /c);
# bash by default, powershell on Windows.
shell=${INPUT_SHELL:-}
[ -n "$shell" ] || { [ "$windows" = true ] && shell=powershell || shell=bash; }
case $shell in
bash | sh | python | pwsh) exe=$shell flag=-c ;;
cmd | powershell)
    [ "$windows" = true ] || bad "shell: '$shell' exists only on Windows runners"
    exe=$shell.exe flag=-c
    [ "$shell" = cmd ] && flag='/d /s /c'
    ;;
*) bad "shell: '$shell' is not bash, sh, python, pwsh, cmd or powershell" ;;
esac
found='' wrapper='' shown_dir=''
lookup found "$exe" || bad "shell: '$shell' is not on this runner's PATH"
native exe "$found"

# Every input is read: none of them reaches the build, an attempt or a
# hook (a store's password is one; the command text is in argv).
unset_inputs

# ---- install ----
timeout=${RETRY_INSTALL_TIMEOUT:-300}
is_count "$timeout" 999999999 ||
    bad "RETRY_INSTALL_TIMEOUT=$timeout: not a number of seconds (1 to 999999999) for each download"
# A line end would end curl's config line (fetch): no URL holds one.
case ${RETRY_INSTALL_FROM:-} in
*[[:cntrl:]]*) bad "RETRY_INSTALL_FROM: a URL holds no control character (a line end?)" ;;
esac

# The action's repository, SERVER/OWNER/REPO from the github context:
# its releases, and its tags for a SHA pin.
repository=${RETRY_ACTION_REPOSITORY:-}
repository=${repository%/}

# What is removed when the step ends, however it ends: a download's
# staging directory, and the private directory of a run without a
# RUNNER_TEMP of its own (signals too, then: they would leave it).
staging='' private_dir=''
# shellcheck disable=SC2329 # the EXIT trap's
cleanup() {
    if [ -n "$staging" ]; then rm -rf "$staging"; fi
    if [ -n "$private_dir" ]; then rm -rf "$private_dir"; fi
}
trap cleanup EXIT

# A fresh directory only this user can enter, removed when the step ends.
private() {
    local tmp=${TMPDIR:-/tmp}
    case $tmp in /*) ;; *) tmp=$PWD/$tmp ;; esac
    work=$(mktemp -d "$tmp/retry-action.XXXXXX") ||
        die "cannot create a private directory in $tmp"
    private_dir=$work
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# Where retry is installed: RUNNER_TEMP/retry-action, the job's own, kept
# for the job's next use. Without RUNNER_TEMP (outside GitHub), a fresh
# private directory each time: a fixed name in a shared directory would
# run whatever another user put there first. Checked (check_work) with
# what it holds: RUNNER_TEMP, this user's or root's, and writable by no
# other user unless sticky (as /tmp); retry-action, this user's.
reuse=false
if [ -n "${RUNNER_TEMP:-}" ]; then
    work=$RUNNER_TEMP/retry-action
    [ -e "$work" ] || [ -L "$work" ] || (umask 077 && mkdir -p "$work") 2>/dev/null
    reuse=true
else
    private
fi
check_work() {
    [ "$reuse" = true ] || return 0
    if mine D "$RUNNER_TEMP" d "$work" || { sticky "$RUNNER_TEMP" && mine d "$work"; }; then
        return 0
    fi
    say "warning: $work is not this user's own directory, or another user can replace it: installing into a fresh one, removed when the step ends and not put on PATH"
    reuse=false
    private
}

# GET URL into FILE, bounded; prints the HTTP status (000: no answer) and
# returns curl's own status, which says whether the transfer completed.
# The URL goes by curl's config on stdin, not its arguments: a mirror's
# password in argv is readable by every user of the machine (ps). -g: a
# [ or { in it is itself, not one of curl's URL patterns. An https
# download follows redirects over https only: a checksum fetched over
# http is no check.
fetch() {
    local only='=https,http'
    case $1 in [Hh][Tt][Tt][Pp][Ss]://*) only='=https' ;; esac
    printf 'url = "%s"\n' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g')" |
        curl -sSL --proto "$only" --proto-redir "$only" --connect-timeout 15 --max-time "$timeout" \
            -g -K - -o "$2" -w '%{http_code}' 2>/dev/null
}

# Why curl failed, from its exit status (its own message is not shown: it
# may quote part of a URL whose password it could not tell apart).
curl_why() {
    case $1 in
    1) echo "redirected to a protocol it does not follow (from https, https only)" ;;
    3) echo "not a URL curl can read (a password holding / ? # @ must be percent-encoded)" ;;
    6) echo "cannot resolve its host" ;;
    7) echo "cannot connect" ;;
    18) echo "cut short: the connection closed before the end of the file" ;;
    28) echo "timed out: not complete within ${timeout} s (RETRY_INSTALL_TIMEOUT)" ;;
    35 | 51 | 53 | 54 | 58 | 59 | 60 | 77 | 80 | 83 | 90 | 91) echo "the TLS connection failed" ;;
    *) echo "curl failed" ;;
    esac
}
unfetched() { # URL CURL_STATUS
    die "cannot download $(shown "$1"): $(curl_why "$2") (curl exit $2)"
}

# Builds retry from the action's own checkout, into $dir.
build() {
    say "$1; building retry from the action's checkout with cargo (a few minutes)"
    local source=${RETRY_ACTION_PATH:-}
    [ -f "$source/Cargo.toml" ] || die "no release to install, and no checkout to build ($source)"
    command -v "${CARGO:-cargo}" >/dev/null 2>&1 ||
        die "no cargo on this runner to build retry: pin the action to a release tag (uses: OWNER/REPO@vX.Y.Z), or install Rust in an earlier step"
    local into="$work/build"
    "${CARGO:-cargo}" build --release --locked --quiet --manifest-path "$source/Cargo.toml" \
        --target-dir "$into" >&2 || die "cargo build failed in $source"
    [ -x "$into/release/$binary" ] || die "cargo build left no $into/release/$binary"
    dir=$into/release
}

# Whether DIR holds the retry an earlier step of this job installed, as
# it was: this user's file in this user's directory, that no one else can
# change, with the checksum recorded when it was installed. Says why not
# when it holds something else.
cached() { # DIR
    local bin=$1/$binary record=$1/$binary.cksum why want=''
    [ -e "$bin" ] || [ -L "$bin" ] || return 1
    if ! [ -e "$record" ] && ! [ -L "$record" ]; then
        why="no checksum was recorded beside it ($binary.cksum)"
    elif ! mine d "$1" f "$bin" f "$record"; then
        why="another user owns it or can change it"
    elif ! { IFS= read -r want <"$record" || [ -n "$want" ]; } || ! crc_of "$(crc "$bin" 2>/dev/null)" ||
        [ "$want" != "$sum" ]; then
        why="it is not the binary installed there (its checksum differs from the recorded one)"
    elif ! [ -x "$bin" ]; then
        why="it is not executable"
    else
        return 0
    fi
    say "warning: not running the cached $bin: $why; installing again"
    return 1
}

# COMMAND..., ended after $timeout s at most: by timeout(1) where it
# works, else by a watchdog (macOS has no timeout). 124 or 143 if stopped.
bounded() {
    if timeout 1 true 2>/dev/null; then
        timeout "$timeout" "$@"
        return
    fi
    "$@" &
    local pid=$! dog status
    (sleep "$timeout" && kill "$pid") </dev/null >/dev/null 2>&1 &
    dog=$!
    wait "$pid"
    status=$?
    kill "$dog" 2>/dev/null
    return "$status"
}

# The release tag (v...) that points at COMMIT in the action's repository,
# as a SHA pin names it: from `git ls-remote --tags`, which needs no token
# (every runner has git). An annotated tag's commit is its peeled line
# (TAG^{}). Returns 1 when no tag points there, 2 when git cannot tell.
tag_of() { # COMMIT
    local refs
    # Only http(s): no other transport (ext::, ssh) a value could name.
    case $repository in
    http://* | https://*) ;;
    *) return 2 ;;
    esac
    # From /, outside the job's checkout: its .git/config (actions/checkout
    # puts the job's token there as an http.extraheader, and a step may
    # add url.*.insteadOf) neither goes to the server nor steers the lookup.
    refs=$(unset GIT_DIR GIT_WORK_TREE GIT_COMMON_DIR && cd / &&
        GIT_TERMINAL_PROMPT=0 GIT_ALLOW_PROTOCOL=http:https \
            GIT_HTTP_LOW_SPEED_LIMIT=1 GIT_HTTP_LOW_SPEED_TIME=$timeout \
            bounded git ls-remote --tags "$repository" 2>/dev/null) || return 2
    printf '%s\n' "$refs" | awk -v commit="$1" '
        tolower($1) == commit {
            tag = $2
            sub("^refs/tags/", "", tag)
            sub("\\^\\{\\}$", "", tag)
            if (tag ~ /^v[0-9][0-9A-Za-z._+-]*$/) { print tag; found = 1; exit }
        }
        END { exit !found }'
}

# Where a release is kept, into $cache: the runner's tool cache when no
# other user can change it (RUNNER_TOOL_CACHE/retry/VERSION/TARGET, the
# layout of actions/tool-cache), which a self-hosted runner keeps for its
# next jobs; else the job's RUNNER_TEMP.
cache_for() { # VERSION TARGET
    local tools=${RUNNER_TOOL_CACHE:-}
    if [ "$reuse" = true ] && [ -n "$tools" ] && mine d "$tools" &&
        { [ -d "$tools/retry/$1" ] || (umask 022 && mkdir -p "$tools/retry/$1") 2>/dev/null; } &&
        mine d "$tools/retry" d "$tools/retry/$1"; then
        cache=$tools/retry/$1/$2
    else
        cache=$work/$1-$2
    fi
}

# The job's next use, into $dir, at the cost of two programs (candidate,
# above): every path it relies on is one no other user can change, and
# the copy's checksum is the one recorded when it was installed.
fast() {
    local seen='' out='' want=''
    if [ "$early" = true ]; then
        early=false
        IFS= read -r -d '' seen <&8
        exec 8<&-
        # Not waited for unless find's check passed: then no one else
        # can have put a FIFO, which would hold cksum, in the copy's place.
        if [ "$seen" != "$early_expected" ]; then
            exec 9<&-
            return 1
        fi
        IFS= read -r -d '' out <&9
        exec 9<&-
        crc_of "$out" || return 1
    else
        [ "$reuse" = true ] && candidate && mine "${checks[@]}" || return 1
        crc_of "$(crc "$cache/$binary" 2>/dev/null)" || return 1
    fi
    { IFS= read -r want <"$cache/$binary.cksum" || [ -n "$want" ]; } &&
        [ "$want" = "$sum" ] && [ -x "$cache/$binary" ] || return 1
    dir=$cache
}

# Installs retry, into $dir: from the job's mirror (RETRY_INSTALL_FROM,
# which wins), else from the action's release:
# REPOSITORY/releases/download/TAG, the tag being the ref, or the release
# tag that points at a SHA pin.
install() {
    fast && return
    check_work
    local ref=${RETRY_ACTION_REF:-} tag from source got status
    local mirror=${RETRY_INSTALL_FROM:-}
    target_for "${RUNNER_OS:-}" "${RUNNER_ARCH:-}" >/dev/null || {
        build "no release build for ${RUNNER_OS:-?} ${RUNNER_ARCH:-?}"
        return
    }
    if [ -z "$ref" ]; then
        build "no release ref for this action (a local uses: ./)"
        return
    fi
    tag=$ref
    case $ref in
    *[!0-9a-fA-F]*) ;;
    *)
        if [ ${#ref} -eq 40 ] && [ -n "$repository" ]; then
            ref=$(printf '%s' "$ref" | tr 'A-F' 'a-f')
            tag=$(tag_of "$ref")
            case $? in
            0)
                say "commit $ref is release $tag"
                # For the job's next use, which then asks no one.
                if [ "$reuse" = true ]; then
                    (umask 022 && printf '%s\n' "$tag" >"$work/commit-$ref") 2>/dev/null
                fi
                ;;
            1)
                build "no release tag points at commit $ref in $(shown "$repository")"
                return
                ;;
            *)
                build "cannot list the tags of $(shown "$repository") (git ls-remote failed or took over ${timeout} s) to find commit $ref's release"
                return
                ;;
            esac
        fi
        ;;
    esac
    if ! release_tag "$tag"; then
        build "$tag is no release tag (v followed by its version)"
        return
    fi
    if [ -n "$mirror" ]; then
        from=$mirror
        source="the mirror $(shown "$mirror") (RETRY_INSTALL_FROM)"
    elif [ -n "$repository" ]; then
        from=$repository/releases/download/$tag
        source="the release at $(shown "$from")"
    else
        build "no place to download release $tag from (no repository in the github context)"
        return
    fi
    version=${tag#v}
    archive_for "$version" "$target" >/dev/null
    cache_for "$version" "$target"
    # The job's second use: the copy the first one checked, if still so.
    if [ "$reuse" = true ] && cached "$cache"; then
        dir=$cache
        return
    fi
    # Said as such: curl's "command not found" would read as a failed download.
    command -v curl >/dev/null 2>&1 ||
        die "no curl on this runner to download retry $version from $(shown "$from"): install curl in an earlier step"
    staging=$(mktemp -d "$work/download.XXXXXX") || die "cannot create a directory in $work"
    got=$(fetch "$from/$archive.sha256" "$staging/sum") || {
        status=$?
        unfetched "$from/$archive.sha256" "$status"
    }
    case $got in
    200) ;;
    404)
        # A mirror is the job's choice: it must hold the release.
        [ -z "$mirror" ] ||
            die "no $archive.sha256 at $(shown "$mirror") (RETRY_INSTALL_FROM, the job's mirror): put the release's files there"
        build "no release $archive for $tag"
        return
        ;;
    *) die "cannot download $(shown "$from/$archive.sha256"): HTTP $got" ;;
    esac
    got=$(fetch "$from/$archive" "$staging/$archive") || {
        status=$?
        unfetched "$from/$archive" "$status"
    }
    [ "$got" = 200 ] || die "cannot download $(shown "$from/$archive"): HTTP $got"
    local want=
    read -r want _ <"$staging/sum" || [ -n "$want" ] || want=
    sha256 "$staging/$archive"
    [ -n "$want" ] && [ "$want" = "$sum" ] ||
        die "checksum mismatch for $archive (its .sha256 says ${want:-nothing}, the file is $sum): refusing it, nothing installed"
    case $archive in
    *.zip) (cd "$staging" && unzip -q "$archive") || die "cannot unpack $archive" ;;
    *) tar -xzf "$staging/$archive" -C "$staging" || die "cannot unpack $archive" ;;
    esac
    local unpacked="$staging/${archive%.zip}"
    unpacked=${unpacked%.tar.gz}
    [ -f "$unpacked/$binary" ] || die "$archive holds no ${archive%%.[tz]*}/$binary"
    # A link's target is not what the checksum covered: anyone's file.
    [ -L "$unpacked/$binary" ] &&
        die "$archive's ${archive%%.[tz]*}/$binary is a symbolic link, not the file its checksum covers: refusing it, nothing installed"
    # What the cache held is gone, or, if it cannot be removed, left aside.
    if [ -e "$cache" ] || [ -L "$cache" ]; then
        rm -rf "$cache" 2>/dev/null
        if [ -e "$cache" ] || [ -L "$cache" ]; then
            cache=$(mktemp -d "$cache.XXXXXX") || die "cannot create a directory in $work"
        fi
    fi
    # Copied, not moved: unpacked by root, the file keeps the archive's
    # owner. Then its checksum, for the job's next use to check.
    {
        mkdir -p "$cache" && chmod 755 "$cache" &&
            cp "$unpacked/$binary" "$cache/.$binary.new" && chmod 755 "$cache/.$binary.new" &&
            mv -f "$cache/.$binary.new" "$cache/$binary" && crc_of "$(crc "$cache/$binary")" &&
            printf '%s\n' "$sum" >"$cache/$binary.cksum" && chmod 644 "$cache/$binary.cksum"
    } || die "cannot install into $cache"
    rm -rf "$staging"
    staging=
    say "installed retry $version ($target) from $source"
    dir=$cache
}

dir=
install
retry="$dir/$binary"

# ---- run ----
# The job's RETRY_* to give back: the attempts run a bash of the Action's
# own, which gives the job's variables back, then runs the command in the
# shell asked for; retry's lines and summary name the user's command, not
# that bash. new_command_on_retry is retry's --alternate, run the same
# way from the second attempt on, as nick-fields runs it (stay on it:
# --alternate-repeat last), named by the user's words too.
alternate=()
if [ -n "$job_env" ]; then
    export RETRY_GITHUB_TITLE="$command"
    # shellcheck disable=SC2016 # expanded by that bash, not this one
    pick='eval "${RETRY_ACTION_JOB_ENV-}"; unset RETRY_ACTION_JOB_ENV; exec "$0" $2 "$1"'
    lookup wrapper bash || die "no bash on this runner's PATH to give the job's RETRY_* variables back"
    native wrapper "$wrapper"
    argv=("$wrapper" -c "$pick" "$found" "$command" "$flag")
    alternate=("$wrapper" -c "$pick" "$found" "$new_command" "$flag")
elif [ "$shell" = cmd ]; then
    argv=("$exe" /d /s /c "$command")
    alternate=("$exe" /d /s /c "$new_command")
else
    argv=("$exe" "$flag" "$command")
    alternate=("$exe" "$flag" "$new_command")
fi
if [ -n "$new_command" ]; then
    export RETRY_GITHUB_TITLE="$command" RETRY_GITHUB_ALTERNATE_TITLE="$new_command"
    # One line of words, each quoted as sh reads it back: retry splits it so.
    line=''
    for word in "${alternate[@]}"; do
        quote "$word"
        line="$line $quoted"
    done
    flags+=(--alternate "${line# }" --alternate-repeat last)
fi
# One variable may hold 128 KiB on Linux (MAX_ARG_STRLEN): the job's
# RETRY_* beyond that are not given back, rather than retry not starting.
env_bytes() {
    local LC_ALL=C
    job_env_bytes=${#job_env}
}
env_bytes
if [ "$job_env_bytes" -gt 131000 ]; then
    notice "the job's RETRY_* variables hold $job_env_bytes bytes, more than one variable can carry: the command does not get them back"
elif [ -n "$job_env" ]; then
    export RETRY_ACTION_JOB_ENV="$job_env"
fi
if [ -n "$store" ]; then
    export RETRY_STORE="$store"
fi
unset RETRY_ACTION_REF RETRY_ACTION_REPOSITORY RETRY_ACTION_PATH

# Git Bash would rewrite cmd's /d /s /c as paths on their way to retry.exe
# (set for cmd only: a bash command's own programs keep Git Bash's rules).
if [ "$shell" = cmd ]; then
    export MSYS2_ARG_CONV_EXCL='*'
fi
RETRY_GITHUB_OUTPUT=1 RETRY_GITHUB_ACTION=$wishes "$retry" ${flags[@]+"${flags[@]}"} -- "${argv[@]}"
status=$?
# retry's parsers run before anything starts: its exit 2 is either their
# refusal (its line shown, nothing run, no outputs written) or the
# command's own 2; 126 and 127, retry that could not start or the
# command's. Which one, is asked only then, so that a cached start runs
# retry once: outputs retry wrote say the command ran; else a plan, which
# runs nothing, tells a refused input (the outputs as for any bad input)
# from retry stopping before the command for a reason of its own (a
# --metrics-dir it cannot write: its line above says why) or not
# starting at all.
wrote_outputs() {
    local line=''
    # Nowhere to write them, or a FIFO, not to be read: nothing to add.
    [ -n "${GITHUB_OUTPUT:-}" ] && ! [ -p "$GITHUB_OUTPUT" ] || return 0
    [ -f "$GITHUB_OUTPUT" ] || return 1
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in total_attempts=*) return 0 ;; esac
        line=''
    done <"$GITHUB_OUTPUT"
    return 1
}
case $status in
2 | 126 | 127)
    if ! wrote_outputs; then
        refused=$("$retry" --plan ${flags[@]+"${flags[@]}"} 2>&1 >/dev/null)
        case $? in
        0)
            outputs 0 "$status" "retry ended with exit status $status before running the command"
            exit "$status"
            ;;
        2)
            outputs 0 2 "$refused"
            exit 2
            ;;
        *) die "cannot run $retry (exit status $status)" ;;
        esac
    fi
    ;;
esac
# On PATH for the job's later steps, once it ran: not a private directory,
# which is gone when the step ends.
if [ -z "$private_dir" ] && appendable GITHUB_PATH; then
    native shown_dir "$dir"
    case $shown_dir in
    *"$nl"*) say "warning: nothing put on PATH: $shown_dir holds a line end (GITHUB_PATH takes one directory a line)" ;;
    *) { printf '%s\n' "$shown_dir" >>"$GITHUB_PATH"; } 2>/dev/null ||
        say "warning: cannot put $shown_dir on PATH ($GITHUB_PATH)" ;;
    esac
fi
if [ "$status" -ne 0 ] && [ "$continue_on_error" = true ]; then
    say "continue_on_error: the step succeeds; its exit_code output is $status"
    exit 0
fi
exit "$status"
