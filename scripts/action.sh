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
# downloaded or run; retry's own are checked by retry's parsers (--plan),
# one line with exit 2, once it is installed and before anything runs or
# is put on PATH. Either way the outputs say so. Once read, every
# INPUT_* variable is removed: no build, attempt or hook sees one (a
# store's password among them).
#
# Install: the release archive for RUNNER_OS/RUNNER_ARCH from the job's
# RETRY_INSTALL_FROM (a mirror: the place that holds the release's files by
# their own names; one without them is an error), else from
# RETRY_ACTION_REPOSITORY/releases/download/TAG (action.yml derives
# SERVER/OWNER/REPO from the github context; a test gives its loopback
# server): TAG is RETRY_ACTION_REF, or for a 40-hex SHA pin the release tag
# that points at it (git ls-remote --tags, no token). Checked against its
# .sha256 before it is unpacked, kept in RUNNER_TOOL_CACHE/retry/VERSION/
# TARGET (or RUNNER_TEMP) with its checksum for the next use (which runs it
# only if it is still this user's, no one else can write it, and its
# checksum is the recorded one) and put on GITHUB_PATH. Without
# RUNNER_TEMP, a fresh private directory (mktemp -d) and nothing reused:
# never a fixed name in a shared directory. Without a release for the ref
# (a branch, a commit no tag points at, a fork, `uses: ./`), retry is
# built, saying why, from the action's own checkout (RETRY_ACTION_PATH)
# with cargo ($CARGO if set). Nothing is fetched from anywhere else.
# RETRY_INSTALL_TIMEOUT bounds each download as a whole, in seconds (1 to
# 999999999, default 300), as for scripts/install.sh; a download that fails
# says why in curl's terms (timed out, cut short, cannot connect).
#
# Outputs: total_attempts, exit_code, exit_error (nick-fields' words) and
# reason (retry's), written by retry itself at the end of the run
# (RETRY_GITHUB_OUTPUT=1: src/sinks/summary.rs), so they are the run's
# own figures; by this script for a bad input (0 attempts, exit code 2).
# Bash 3.2 and BSD tools (macOS), Git Bash (Windows).
set -u

# One line: a line end in an input's value is shown as a space.
say() { printf 'retry action: %s\n' "$(printf '%s' "$*" | tr '[:cntrl:]' ' ')" >&2; }
# The step outputs, for a run that ended before retry could write them:
# a later step that reads them never gets empty strings. One line each (a
# line end in an input's value must not start an output of its own).
outputs() { # TOTAL_ATTEMPTS EXIT_CODE WHY
    [ -n "${GITHUB_OUTPUT:-}" ] || return 0
    local why
    why=$(printf '%s' "$3" | tr '[:cntrl:]' ' ')
    printf 'total_attempts=%s\nexit_code=%s\nexit_error=%s\nreason=%s\n' \
        "$1" "$2" "$why" "$why" >>"$GITHUB_OUTPUT"
}
# A bad input: one line naming it, exit 2, nothing downloaded or run, and
# the outputs say so (no attempt).
bad() {
    say "$*"
    outputs 0 2 "$*"
    exit 2
}
die() {
    say "$*"
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

# A true/false input, '' being its default.
boolean() { # NAME VALUE DEFAULT
    case ${2:-$3} in
    true | True | TRUE) echo true ;;
    false | False | FALSE) echo false ;;
    *) bad "$1: '$2' is not true or false" ;;
    esac
}

# ---- the inputs ----
windows=false
[ "${RUNNER_OS:-}" = Windows ] && windows=true

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
warning_on_retry=$(boolean warning_on_retry "${INPUT_WARNING_ON_RETRY:-}" true) || exit 2
continue_on_error=$(boolean continue_on_error "${INPUT_CONTINUE_ON_ERROR:-}" false) || exit 2

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
every=1-255
[ "$windows" = true ] && every=1-0xFFFFFFFF # any 32-bit code, as unsigned
retry_codes=$every fatal_codes=${INPUT_FATAL_ON:-}
[ -n "${INPUT_PRESET:-}${INPUT_SUCCESS_ON:-}" ] && retry_codes=
case $retry_on in
any | success) ;; # nick-fields lists success, and treats it as any
timeout) retry_codes=124 ;;
error) fatal_codes=124${fatal_codes:+,$fatal_codes} ;;
*) bad "retry_on: '$retry_on' is not any, timeout, error or success" ;;
esac
if [ -n "$exit_code_input" ]; then
    { [ "$exit_code_input" = 0 ] || is_count "$exit_code_input" 255; } ||
        bad "retry_on_exit_code: '$exit_code_input' is not an exit code (0 to 255)"
    [ "$retry_on" = timeout ] &&
        bad "retry_on_exit_code: retries only that code, and retry_on: timeout only timeouts; give one"
    retry_codes=$exit_code_input
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
own --on-retry "${INPUT_ON_RETRY_COMMAND:-}"
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
# nick-fields' does, and a job's own RETRY_PRESET or presets file must not
# change what it retries.
own --preset "${INPUT_PRESET:-none}"
own --budget "${INPUT_BUDGET:-}"
own --breaker "${INPUT_BREAKER:-}"
own --metrics-dir "${INPUT_METRICS_DIR:-}"
# The store the budget and the breaker share (budget_store: its older
# name). Its password stays off the command line: by its variable, which
# retry keeps from the command and the hook.
store=${INPUT_STORE:-${INPUT_BUDGET_STORE:-}}
if [ -n "${INPUT_STORE:-}" ] && [ -n "${INPUT_BUDGET_STORE:-}" ] &&
    [ "$INPUT_STORE" != "$INPUT_BUDGET_STORE" ]; then
    bad "store and budget_store: the same setting by two names; give one"
fi
if [ -n "$store" ]; then
    export RETRY_STORE="$store"
fi

# A path a native Windows program (retry.exe) understands.
native() {
    if [ "$windows" = true ] && command -v cygpath >/dev/null 2>&1; then
        cygpath -w "$1"
    else
        printf '%s\n' "$1"
    fi
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
found=$(command -v "$exe" 2>/dev/null) || bad "shell: '$shell' is not on this runner's PATH"
exe=$(native "$found")

# Every input is read: none of them reaches the build, an attempt or a
# hook (a store's password is one; the command text is in argv).
for name in ${!INPUT_@}; do
    unset "$name"
done

# ---- install ----
# ---- names: the rule scripts/install.sh and release.yml share ----
# The release's name for a runner: target_for RUNNER_OS RUNNER_ARCH, then
# archive_for VERSION TARGET (scripts/dist.sh's and release.yml's names;
# musl on x86_64 Linux, as scripts/install.sh and the README choose).
target_for() {
    case "$1 $2" in
    "Linux X64") echo x86_64-unknown-linux-musl ;;
    "Linux ARM64") echo aarch64-unknown-linux-gnu ;;
    "macOS ARM64") echo aarch64-apple-darwin ;;
    "macOS X64") echo x86_64-apple-darwin ;;
    "Windows X64") echo x86_64-pc-windows-msvc ;;
    *) return 1 ;;
    esac
}
archive_for() {
    case $2 in
    *-windows-*) echo "retry-$1-$2.zip" ;;
    *) echo "retry-$1-$2.tar.gz" ;;
    esac
}
# ---- end of names ----

binary=retry
[ "$windows" = true ] && binary=retry.exe
timeout=${RETRY_INSTALL_TIMEOUT:-300}
is_count "$timeout" 999999999 ||
    bad "RETRY_INSTALL_TIMEOUT=$timeout: not a number of seconds (1 to 999999999) for each download"
# A line end would end curl's config line (fetch): no URL holds one.
case ${RETRY_INSTALL_FROM:-} in
*[[:cntrl:]]*) bad "RETRY_INSTALL_FROM: a URL holds no control character (a line end?)" ;;
esac

sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    else
        shasum -a 256 "$1" | cut -d ' ' -f 1 # macOS
    fi
}

# Whether PATH is a directory (d) or regular file (f) that no other user
# can change: owned by this user or root, writable by neither group nor
# others, no symbolic link. NTFS has no such modes (Git Bash shows every
# file as the user's): on Windows, RUNNER_TEMP's own ACL is relied on.
mine() { # PATH d|f
    if [ "$windows" = true ]; then
        [ -"$2" "$1" ]
        return
    fi
    local me
    me=$(id -u) || return 1
    [ -n "$(find "$1" -prune -type "$2" \( -user "$me" -o -user 0 \) ! -perm -020 ! -perm -002 2>/dev/null)" ]
}

# A fresh directory only this user can enter.
private() {
    mktemp -d "${TMPDIR:-/tmp}/retry-action.XXXXXX" ||
        die "cannot create a private directory in ${TMPDIR:-/tmp}"
}

# Where retry is installed: RUNNER_TEMP/retry-action, the job's own, kept
# for the job's next use. Without RUNNER_TEMP (outside GitHub), a fresh
# private directory each time: a fixed name in a shared directory would
# run whatever another user put there first.
# The action's repository, SERVER/OWNER/REPO from the github context:
# its releases, and its tags for a SHA pin.
repository=${RETRY_ACTION_REPOSITORY:-}
repository=${repository%/}

reuse=false
if [ -n "${RUNNER_TEMP:-}" ]; then
    work=$RUNNER_TEMP/retry-action
    (umask 077 && mkdir -p "$work") || die "cannot create $work"
    if mine "$work" d; then
        reuse=true
    else
        say "warning: $work is not this user's own directory (another user owns it or can write it): installing into a fresh one"
        work=$(private) || exit 1
    fi
else
    work=$(private) || exit 1
fi

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

# Builds retry from the action's own checkout; prints the binary's directory.
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
    printf '%s\n' "$into/release"
}

# Whether DIR holds the retry an earlier step of this job installed, as
# it was: this user's file in this user's directory, that no one else can
# change, with the checksum recorded when it was installed. Says why not
# when it holds something else.
cached() { # DIR
    local bin=$1/$binary record=$1/$binary.sha256 why
    [ -e "$bin" ] || [ -L "$bin" ] || return 1
    if ! mine "$1" d || ! mine "$bin" f || ! mine "$record" f; then
        why="another user owns it or can change it"
    elif [ "$(cat "$record")" != "$(sha256 "$bin")" ]; then
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

# Where a release is kept: the runner's tool cache when no other user can
# change it (RUNNER_TOOL_CACHE/retry/VERSION/TARGET, the layout of
# actions/tool-cache), which a self-hosted runner keeps for its next
# jobs; else the job's RUNNER_TEMP.
cache_for() { # VERSION TARGET
    local tools=${RUNNER_TOOL_CACHE:-}
    if [ "$reuse" = true ] && [ -n "$tools" ] && mine "$tools" d &&
        (umask 022 && mkdir -p "$tools/retry/$1") 2>/dev/null &&
        mine "$tools/retry" d && mine "$tools/retry/$1" d; then
        printf '%s\n' "$tools/retry/$1/$2"
    else
        printf '%s\n' "$work/$1-$2"
    fi
}

# Installs retry; prints the directory that holds it. From the job's
# mirror (RETRY_INSTALL_FROM, which wins), else from the action's release:
# REPOSITORY/releases/download/TAG, the tag being the ref, or the release
# tag that points at a SHA pin.
install() {
    # The store's password is for retry alone: no download, git or build
    # (a dependency's build script) sees it. This runs in $(...), a
    # subshell: the run below still has it.
    unset RETRY_STORE RETRY_BUDGET_STORE
    # staging is not local: the EXIT trap removes it after a return too.
    local target ref=${RETRY_ACTION_REF:-} tag version archive from cache got status
    local mirror=${RETRY_INSTALL_FROM:-}
    target=$(target_for "${RUNNER_OS:-}" "${RUNNER_ARCH:-}") || {
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
            0) say "commit $ref is release $tag" ;;
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
    # A release's tag names its version: a file name and a path below.
    case $tag in
    v | v[0-9]*[!0-9A-Za-z._+-]* | v[!0-9]* | [!v]*)
        build "$tag is no release tag (v followed by its version)"
        return
        ;;
    esac
    from=${mirror:-${repository:+$repository/releases/download/$tag}}
    if [ -z "$from" ]; then
        build "no place to download release $tag from (no repository in the github context)"
        return
    fi
    version=${tag#v}
    archive=$(archive_for "$version" "$target")
    cache=$(cache_for "$version" "$target")
    # The job's second use: the copy the first one checked, if still so.
    if [ "$reuse" = true ] && cached "$cache"; then
        printf '%s\n' "$cache"
        return
    fi
    # Said as such: curl's "command not found" would read as a failed download.
    command -v curl >/dev/null 2>&1 ||
        die "no curl on this runner to download retry $version from $(shown "$from"): install curl in an earlier step"
    staging=$(mktemp -d "$work/download.XXXXXX") || die "cannot create a directory in $work"
    trap 'rm -rf "$staging"' EXIT
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
    local want have
    want=$(cut -d ' ' -f 1 <"$staging/sum")
    have=$(sha256 "$staging/$archive")
    [ -n "$want" ] && [ "$want" = "$have" ] ||
        die "checksum mismatch for $archive (its .sha256 says ${want:-nothing}, the file is $have): refusing it, nothing installed"
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
            mv -f "$cache/.$binary.new" "$cache/$binary" &&
            sha256 "$cache/$binary" >"$cache/$binary.sha256" && chmod 644 "$cache/$binary.sha256"
    } || die "cannot install into $cache"
    rm -rf "$staging"
    trap - EXIT
    say "installed retry $version ($target) from the release"
    printf '%s\n' "$cache"
}

dir=$(install) || exit 1
retry="$dir/$binary"
# retry's own inputs, by retry's own parsers, before anything runs or is
# put on PATH (a plan runs nothing): a bad one is retry's one line, exit 2,
# and the outputs as for any bad input.
refused=$("$retry" --plan ${flags[@]+"${flags[@]}"} 2>&1 >/dev/null)
if [ $? -eq 2 ]; then
    printf '%s\n' "$refused" >&2
    outputs 0 2 "$refused"
    exit 2
fi
if [ -n "${GITHUB_PATH:-}" ]; then
    native "$dir" >>"$GITHUB_PATH"
fi

# ---- run ----
# new_command_on_retry: the attempts after the first run it instead, as
# RETRY_ATTEMPT says (one command line for retry, the choice in bash);
# retry's lines and summary name the user's command, not that choice.
unset RETRY_GITHUB_TITLE
if [ -n "$new_command" ]; then
    export RETRY_GITHUB_TITLE="$command"
    # shellcheck disable=SC2016 # expanded by that bash, not this one
    pick='c=$1; [ "${RETRY_ATTEMPT:-1}" -gt 1 ] && c=$2; exec "$0" $3 "$c"'
    argv=("$(native "$(command -v bash)")" -c "$pick" "$found" "$command" "$new_command" "$flag")
elif [ "$shell" = cmd ]; then
    argv=("$exe" /d /s /c "$command")
else
    argv=("$exe" "$flag" "$command")
fi

# Git Bash would rewrite cmd's /d /s /c as paths on their way to retry.exe
# (set for cmd only: a bash command's own programs keep Git Bash's rules).
if [ "$shell" = cmd ]; then
    export MSYS2_ARG_CONV_EXCL='*'
fi
RETRY_GITHUB_OUTPUT=1 RETRY_GITHUB_ACTION=$wishes "$retry" ${flags[@]+"${flags[@]}"} -- "${argv[@]}"
status=$?
if [ "$status" -ne 0 ] && [ "$continue_on_error" = true ]; then
    say "continue_on_error: the step succeeds; its exit_code output is $status"
    exit 0
fi
exit "$status"
