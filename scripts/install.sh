#!/bin/sh
# Installs retry from a release: the archive for this machine, checked
# against its .sha256 before anything is unpacked, then the binary, the man
# page and the bash, zsh and fish completions.
#
#   sh install.sh                   # into ~/.local/bin and ${XDG_DATA_HOME:-~/.local/share},
#                                   # as root into /usr/local/bin and /usr/local/share
#   sh install.sh --prefix DIR      # into DIR/bin and DIR/share
#
# Where from: the release that published this script (the release workflow,
# .github/workflows/release.yml, writes that release's download URL into
# RETRY_RELEASE_URL below when it attaches the script), or
# RETRY_INSTALL_FROM=URL: a mirror, or a test server, holding the release's
# files by their own names (retry-VERSION-TARGET.tar.gz and its .sha256).
# RETRY_INSTALL_TIMEOUT bounds each download as a whole, in seconds
# (default 300; with wget, by timeout(1) or a watchdog).
#
# POSIX sh and tools: runs on Linux, macOS and the BSDs (curl or wget, tar,
# sha256sum or shasum). A checksum mismatch, or any failure before the
# copy, installs nothing.
set -eu

# Written by release.yml when it publishes this script; empty in a checkout.
RETRY_RELEASE_URL=''
# The release this script installs: Cargo.toml's version (the release
# workflow's tag is v followed by it; tests/integration/install.rs checks).
RETRY_VERSION='0.1.0'

say() { printf '%s\n' "install: $*" >&2; }
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
die() {
    say "$@"
    exit 1
}

# ---- names: the rule tests/integration/install.rs holds to release.yml ----
# The release's name for this machine's build: target_for `uname -s`
# `uname -m`, then archive_for VERSION TARGET (as scripts/dist.sh names it).
target_for() {
    case "$1 $2" in
    "Linux x86_64" | "Linux amd64") echo x86_64-unknown-linux-musl ;; # the README's choice
    "Linux aarch64" | "Linux arm64") echo aarch64-unknown-linux-gnu ;;
    "Darwin arm64" | "Darwin aarch64") echo aarch64-apple-darwin ;;
    "Darwin x86_64") echo x86_64-apple-darwin ;;
    *) return 1 ;;
    esac
}
archive_for() { echo "retry-$1-$2.tar.gz"; }
# ---- end of names ----

usage() {
    echo "usage: sh install.sh [--prefix DIR]" >&2
    exit 2
}

prefix=
while [ $# -gt 0 ]; do
    case $1 in
    --prefix)
        [ $# -ge 2 ] && [ -n "$2" ] || { say "--prefix needs a directory"; usage; }
        prefix=$2
        shift 2
        ;;
    --prefix=?*)
        prefix=${1#--prefix=}
        shift
        ;;
    -h | --help)
        sed -n '2,16s/^# \{0,1\}//p' "$0" >&2
        exit 0
        ;;
    *)
        say "unknown argument: $1"
        usage
        ;;
    esac
done

os=$(uname -s)
arch=$(uname -m)
target=$(target_for "$os" "$arch") ||
    die "no release build for $os $arch (there are x86_64 and aarch64 Linux, and macOS): build from source with cargo install"
archive=$(archive_for "$RETRY_VERSION" "$target")

from=${RETRY_INSTALL_FROM:-$RETRY_RELEASE_URL}
[ -n "$from" ] ||
    die "no release to install from: set RETRY_INSTALL_FROM=URL, the place that holds the release's files (its download URL, or a mirror's)"
from=${from%/}
# A line end would end curl's config line (fetch): no URL holds one.
case $from in
*[[:cntrl:]]*)
    say "RETRY_INSTALL_FROM: a URL holds no control character (a line end?)"
    exit 2
    ;;
esac

# 1 to 999999999 (31 years), by its digits: 0 (no bound) is not a
# choice, and curl refuses a number past its range with a status of its
# own, which would read as a failed download.
timeout=${RETRY_INSTALL_TIMEOUT:-300}
case $timeout in
*[!0-9]*) timeout= ;;
*[1-9]*)
    while [ "${timeout#0}" != "$timeout" ]; do timeout=${timeout#0}; done
    [ ${#timeout} -le 9 ] || timeout=
    ;;
*) timeout= ;;
esac
if [ -z "$timeout" ]; then
    say "RETRY_INSTALL_TIMEOUT=${RETRY_INSTALL_TIMEOUT}: not a number of seconds (1 to 999999999) for each download"
    exit 2
fi

# Root installs for every user, where every PATH and sudo's secure_path
# look (`sudo -u nobody retry` finds no ~/.local/bin), and writes nothing
# into a HOME that may be another user's (sudo -E, su without -).
uid=$(id -u 2>/dev/null) || uid=
if [ -z "$prefix" ] && [ "$uid" != 0 ]; then
    # A relative HOME would install below the current directory (and one
    # starting with - would read as an option to mkdir): no place to guess.
    # Bad input, as a bad argument: exit 2.
    case ${HOME:-} in
    '') say "HOME is not set: give --prefix DIR" && exit 2 ;;
    /*) ;;
    *) say "HOME=$HOME is not an absolute path: give --prefix DIR" && exit 2 ;;
    esac
fi
case $prefix in
'' | /*) ;;
*) prefix=$PWD/$prefix ;;
esac

if [ -n "$prefix" ]; then
    bindir=$prefix/bin
    data=$prefix/share
elif [ "$uid" = 0 ]; then
    bindir=/usr/local/bin
    data=/usr/local/share
else
    bindir=$HOME/.local/bin
    # The XDG rule: a relative XDG_DATA_HOME is invalid, and ignored.
    case ${XDG_DATA_HOME:-} in
    /*) data=$XDG_DATA_HOME ;;
    *) data=$HOME/.local/share ;;
    esac
fi
mandir=$data/man/man1
bashdir=$data/bash-completion/completions
zshdir=$data/zsh/site-functions
fishdir=$data/fish/vendor_completions.d

# Everything downloaded and unpacked stays here until it is checked.
work=$(mktemp -d "${TMPDIR:-/tmp}/retry-install.XXXXXX") || die "cannot make a temporary directory"
# A download running in the background (bounded) and its watchdog are
# stopped with the script.
pid= dog=
trap 'rm -rf "$work"' EXIT
trap 'kill $pid $dog 2>/dev/null; exit 130' INT
trap 'kill $pid $dog 2>/dev/null; exit 143' TERM

# Why curl failed, from its exit status (its own message is not shown: it
# may quote part of a URL whose password it could not tell apart).
curl_why() { # STATUS HTTP_CODE
    case $1 in
    1) echo "redirected to a protocol it does not follow (from https, https only)" ;;
    3) echo "not a URL curl can read (a password holding / ? # @ must be percent-encoded)" ;;
    6) echo "cannot resolve its host" ;;
    7) echo "cannot connect" ;;
    18) echo "cut short: the connection closed before the end of the file" ;;
    22) echo "HTTP $2" ;;
    28) echo "timed out: not complete within $timeout s (RETRY_INSTALL_TIMEOUT)" ;;
    35 | 51 | 53 | 54 | 58 | 59 | 60 | 77 | 80 | 83 | 90 | 91) echo "the TLS connection failed" ;;
    *) echo "curl failed" ;;
    esac
}

# COMMAND... ended after $timeout s at most: by timeout(1) where it works
# (busybox's before 1.30 takes -t), else by a watchdog that stops it.
# Returns its status; 124 or 143 when it was stopped. Run in the
# background and waited for with the shell's own stderr closed: a shell
# (dash, busybox's, bash) says a bare "Terminated" of a command that a
# signal stopped, before the message below that says why.
bounded() {
    if timeout 1 true 2>/dev/null; then
        timeout "$timeout" "$@" &
        pid=$!
    else
        "$@" &
        pid=$!
        # Its sleep ends with it when the download ends first.
        (
            trap 'kill "$nap" 2>/dev/null; exit 0' TERM
            sleep "$timeout" &
            nap=$!
            wait "$nap" && kill "$pid"
        ) </dev/null >/dev/null 2>&1 &
        dog=$!
    fi
    wait "$pid" 2>/dev/null && status=0 || status=$?
    pid=
    if [ -n "$dog" ]; then
        kill "$dog" 2>/dev/null || true
        wait "$dog" 2>/dev/null || true
        dog=
    fi
    return "$status"
}

# One file, bounded as a whole. curl: --max-time. wget (busybox's, on
# Alpine) bounds only silence (-T), so a server sending a byte a second
# would never be given up on: bounded() stops it.
# The URL is never an argument: a mirror's password in argv is readable by
# every user of the machine (ps). curl reads it from its config on stdin,
# GNU wget from a file (-i); busybox's wget can take it only as an
# argument, so a URL with a password needs curl there. curl -g: a [ or {
# in the URL is itself, not one of curl's URL patterns.
fetch() {
    if command -v curl >/dev/null 2>&1; then
        # From https, redirects over https only: a checksum fetched over
        # http is no check.
        case $1 in
        [Hh][Tt][Tt][Pp][Ss]://*) redirects='proto-redir = "=https"' ;;
        *) redirects= ;;
        esac
        code=$(printf 'url = "%s"\n%s\n' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g')" "$redirects" |
            curl -fsSL --connect-timeout 15 --max-time "$timeout" -w '%{http_code}' \
                -g -K - -o "$2" 2>/dev/null) || {
            status=$? # before anything else runs
            die "could not download $(shown "$1"): $(curl_why "$status" "$code") (curl exit $status)"
        }
    elif command -v wget >/dev/null 2>&1; then
        case $(wget --help 2>&1) in
        *--input-file*)
            printf '%s\n' "$1" >"$work/url"
            bounded wget -q -T "$timeout" -O "$2" -i "$work/url"
            ;;
        *)
            case $1 in
            *@*) die "could not download $(shown "$1"): busybox's wget takes a URL only as an argument, where every user of this machine can read its password (ps); install curl" ;;
            esac
            # No -T: Debian's busybox, built without it, crashes on it;
            # bounded() is the bound that counts.
            bounded wget -q -O "$2" "$1"
            ;;
        esac || {
            status=$?
            case $status in
            124 | 143) die "could not download $(shown "$1"): timed out: not complete within $timeout s (RETRY_INSTALL_TIMEOUT)" ;;
            *) die "could not download $(shown "$1") (wget exit $status)" ;;
            esac
        }
    else
        die "needs curl or wget to download $(shown "$1")"
    fi
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1"
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" # macOS
    else
        die "needs sha256sum or shasum to check $archive"
    fi | {
        read -r sum _ && echo "$sum"
    }
}

say "$archive from $(shown "$from")"
fetch "$from/$archive.sha256" "$work/$archive.sha256"
fetch "$from/$archive" "$work/$archive"
read -r expected _ <"$work/$archive.sha256" || expected=
actual=$(sha256_of "$work/$archive")
[ -n "$actual" ] || die "could not compute the checksum of $archive"
[ "$expected" = "$actual" ] ||
    die "checksum mismatch for $archive: $archive.sha256 says ${expected:-nothing}, the download is $actual; nothing installed"

(cd "$work" && tar -xzf "$archive") || die "could not unpack $archive"
src=$work/${archive%.tar.gz}
for file in retry man/retry.1 completions/retry.bash completions/_retry completions/retry.fish; do
    [ -f "$src/$file" ] || die "$archive has no $file; nothing installed"
    # A link's target is not what the checksum covered: anyone's file.
    [ ! -L "$src/$file" ] ||
        die "$archive's $file is a symbolic link, not the file its checksum covers; nothing installed"
done
version=$("$src/retry" --version 2>/dev/null) ||
    die "the retry in $archive does not run on this machine ($os $arch); nothing installed"

# Each file is copied beside its place and renamed over it, so a retry
# running now keeps its old binary and no one sees half a file.
elsewhere=
[ -n "$prefix" ] || elsewhere=" (sh install.sh --prefix DIR installs elsewhere)"
put() { # FILE DIR NAME MODE
    mkdir -p "$2" || die "cannot create $2$elsewhere"
    { cp "$1" "$2/.$3.new" && chmod "$4" "$2/.$3.new" && mv -f "$2/.$3.new" "$2/$3"; } ||
        die "cannot write $2/$3$elsewhere"
    echo "installed $2/$3"
}
put "$src/retry" "$bindir" retry 755
put "$src/man/retry.1" "$mandir" retry.1 644
put "$src/completions/retry.bash" "$bashdir" retry 644
put "$src/completions/_retry" "$zshdir" _retry 644
put "$src/completions/retry.fish" "$fishdir" retry.fish 644
echo "$version"

# Where the shell and man look.
case ":${PATH:-}:" in
*":$bindir:"*) echo "$bindir is on PATH" ;;
*) echo "$bindir is not on PATH: add it, e.g. export PATH=\"$bindir:\$PATH\" in your shell's profile" ;;
esac
first=$(command -v retry 2>/dev/null || true)
if [ -n "$first" ] && [ "$first" != "$bindir/retry" ]; then
    echo "another retry comes first on PATH: $first (Debian's retry package installs /usr/bin/retry); put $bindir before $(dirname "$first") in PATH"
fi

# sudo runs a command found on its secure_path, not on PATH: root asks
# sudo for it (`sudo -l` lists it; bounded, as a download), another user
# takes Debian's and Ubuntu's on Linux (sudoers is root's to read). Said
# when another retry comes first there (Debian's /usr/bin/retry).
if command -v sudo >/dev/null 2>&1; then
    secure= whose="sudo's secure_path"
    if [ "$uid" = 0 ]; then
        secure=$(
            timeout=10
            bounded sudo -n -l </dev/null 2>/dev/null |
                sed -n 's/.*[[:space:],]secure_path=\([^,]*\).*/\1/p' | head -n 1 | sed 's/\\:/:/g; s/[[:space:]]*$//'
        ) || secure=
    fi
    if [ -z "$secure" ] && [ "$os" = Linux ]; then
        secure=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
        whose="sudo's usual secure_path (Debian's, Ubuntu's)"
    fi
    # The first retry on it, and whether /usr/local/bin comes before.
    found= local_first= rest=${secure:+$secure:}
    while [ -n "$rest" ] && [ -z "$found" ]; do
        dir=${rest%%:*}
        rest=${rest#*:}
        case $dir in
        /*) ;;
        *) continue ;; # empty or relative: not a place sudo's lookup trusts
        esac
        if [ -f "$dir/retry" ] && [ -x "$dir/retry" ]; then
            found=$dir/retry
        elif [ "$dir" = /usr/local/bin ]; then
            local_first=1
        fi
    done
    if [ -n "$found" ] && [ "$found" != "$bindir/retry" ] && ! [ "$found" -ef "$bindir/retry" ] 2>/dev/null; then
        case ":$secure:" in
        *":$bindir:"*) why="it has $(dirname "$found") before $bindir" ;;
        *) why="it leaves out $bindir" ;;
        esac
        fix="under sudo, give this one's path: $bindir/retry"
        if [ "$bindir" != /usr/local/bin ] && [ -n "$local_first" ]; then
            fix="$fix, or install as root (into /usr/local/bin)"
        fi
        echo "under sudo another retry comes first: $found, from $whose, $secure ($why); $fix"
    fi
fi
if command -v man >/dev/null 2>&1; then
    page=$(man -w retry 2>/dev/null | head -n 1 || true)
    if [ -n "$page" ] && [ "$page" != "$mandir/retry.1" ]; then
        echo "man retry opens another page first: $page; man -l $mandir/retry.1 reads this one"
    elif [ -z "$page" ]; then
        echo "man retry does not find $mandir/retry.1 yet: man looks beside the directories on PATH, or add $(dirname "$mandir") to MANPATH"
    fi
fi
echo "zsh: $zshdir must be in fpath (fpath+=($zshdir) before compinit)"
