#!/usr/bin/env bash
# What each start-up trick still saves, on the release artifact: builds it
# once as shipped and once per trick with that trick turned off
# (`--cfg retry_without="TRICK"`, see build.rs), then measures each build
# against the shipped one in the same run:
#
#   instructions   callgrind, `retry -- true` (exact, no noise)
#   start-up       hyperfine -N, `retry -- true`, ROUNDS rounds of RUNS runs,
#                  every build in turn in each round (load falls on all alike)
#   per attempt    hyperfine -N, `retry -n 200 --base 0ms -- false`
#                  (posix_spawn's saving is per attempt, not at start-up)
#
#   bash bench/tricks.sh            # all tricks; prints a Markdown table
#   ROUNDS=5 RUNS=40 bash bench/tricks.sh arena leak
#   BASE=REV bash bench/tricks.sh   # what the change since REV costs: a row
#                                   # for REV's own build (no tricks unless named)
#
# Builds go to target/tricks/TRICK (a full dist build each, ~1-2 min the
# first time). A trick whose build is not slower to start than the shipped
# one no longer pays for itself: bench/README.md says what was done then.
# Needs valgrind and hyperfine (installed from Debian's packages if missing).
set -euo pipefail
cd "$(dirname "$0")/.."

tricks=("$@")
BASE=${BASE:-}
[ ${#tricks[@]} -gt 0 ] || [ -n "$BASE" ] || tricks=(c_main arena leak lean_parse common_parse environ posix_spawn)
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-60}

need() { # need COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 && return
    echo "tricks: installing $2" >&2
    if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq >&2; APT_UPDATED=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2
}
need hyperfine hyperfine
need valgrind valgrind
need python3 python3

host=$(rustc -vV | sed -n 's/^host: //p')
static="-C target-feature=+crt-static -C relocation-model=static"
case $host in *-linux-*) ;; *) static="" ;; esac

work=$(mktemp -d)
base_src=target/tricks/base-src
cleanup() {
    rm -rf "$work"
    if [ -n "$BASE" ]; then git worktree remove --force "$base_src" 2>/dev/null || true; fi
}
trap cleanup EXIT

build() { # build NAME [CFG]: the dist artifact, copied to $work/NAME
    local name=$1 cfg=${2:-}
    echo "tricks: building $name" >&2
    CARGO_TARGET_DIR="target/tricks/$name" RUSTFLAGS="$static $cfg" \
        cargo build --locked --quiet --profile dist --target "$host" >&2
    # A copy: every build then starts from the same page-cache state.
    cp "target/tricks/$name/$host/dist/retry" "$work/$name"
}

build shipped
for trick in "${tricks[@]}"; do
    build "$trick" "--cfg retry_without=\"$trick\""
done
names=(shipped "${tricks[@]}")
if [ -n "$BASE" ]; then
    # REV's own tree, built as the shipped one is, measured beside it.
    echo "tricks: building $BASE" >&2
    git worktree remove --force "$base_src" 2>/dev/null || true
    git worktree add --detach --quiet "$base_src" "$BASE" >&2
    (cd "$base_src" && CARGO_TARGET_DIR="$PWD/../base" RUSTFLAGS="$static" \
        cargo build --locked --quiet --profile dist --target "$host" >&2)
    cp "target/tricks/base/$host/dist/retry" "$work/base"
    names+=(base)
fi
TRUE=$(type -P true)
FALSE=$(type -P false)

instructions() { # instructions BINARY: callgrind's count for `BINARY -- true`
    local status
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" -- "$TRUE" 2>"$work/vg" && status=0 || status=$?
    # A count is only worth anything for a run that did its job.
    [ "$status" -eq 0 ] || { echo "tricks: $1 -- true exited $status under valgrind" >&2; exit 1; }
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/vg"
}

# hyperfine in rounds; prints NAME<TAB>median seconds for each build.
timed() { # timed ARGS...: the command line after each binary
    local round
    for round in $(seq "$ROUNDS"); do
        local commands=()
        for name in "${names[@]}"; do commands+=("$work/$name $*"); done
        hyperfine -N -i --warmup 3 --runs "$RUNS" --export-json "$work/t.$round.json" \
            "${commands[@]}" >/dev/null 2>&1
    done
    python3 - "${names[@]}" -- "$work"/t.*.json <<'PY'
import json, statistics, sys
split = sys.argv.index("--")
names, files = sys.argv[1:split], sys.argv[split + 1:]
parts = [json.load(open(f))["results"] for f in files]
for i, name in enumerate(names):
    times = [t for part in parts for t in part[i]["times"]]
    print(f"{name}\t{statistics.median(times)}")
PY
    rm -f "$work"/t.*.json
}

echo "tricks: instructions" >&2
declare -A count
for name in "${names[@]}"; do count[$name]=$(instructions "$work/$name"); done
echo "tricks: start-up" >&2
declare -A start
while IFS=$'\t' read -r name median; do start[$name]=$median; done < <(timed -- "$TRUE")
echo "tricks: per attempt" >&2
declare -A loop
while IFS=$'\t' read -r name median; do loop[$name]=$median; done < <(timed -n 200 --base 0ms -- "$FALSE")

echo "| build | instructions (\`retry -- true\`) | start-up vs shipped | 200 attempts vs shipped |"
echo "|---|---|---|---|"
for name in "${names[@]}"; do
    case $name in
    shipped) label=shipped ;;
    base) label="$BASE ($(git rev-parse --short "$BASE"))" ;;
    *) label="without $name" ;;
    esac
    python3 -c '
import sys
label, n, n0, s, s0, l, l0 = sys.argv[1], *map(float, sys.argv[2:])
print(f"| {label} | {n:,.0f} ({(n - n0) / n0 * 100:+.1f} %) | {s / s0:.3f} | {l / l0:.3f} |")
' "$label" "${count[$name]}" "${count[shipped]}" "${start[$name]}" "${start[shipped]}" "${loop[$name]}" "${loop[shipped]}"
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); ROUNDS=$ROUNDS RUNS=$RUNS"
