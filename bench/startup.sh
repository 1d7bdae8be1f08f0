#!/usr/bin/env bash
# Start-up and per-attempt cost of retry builds against Debian's C `retry`
# and a `sh` loop (issue 45): the figures of the issue's table, for one or
# more binaries side by side.
#
#   bash bench/startup.sh              # the musl artifact (scripts/dist.sh builds it)
#   bash bench/startup.sh BIN...       # these builds, e.g. a "before" and an "after"
#
# Every ratio is read within one run: each round is one hyperfine run of
# every start-up command in turn (`BIN -- true` for each BIN, Debian's
# `retry -- true`, `true`), then one of every per-attempt command in turn
# (`BIN -n 1000 --base 0ms -- false`, Debian's `retry --times=1000
# --delay=0 -- false`, a `sh` loop running `false` 1000 times), so load that
# comes and goes on a shared machine falls on all of them alike. The medians
# are over every round. Beside them: the binary's size (the artifacts are
# stripped), the peak RSS of `BIN -- true` (GNU time, median of 11) and,
# where valgrind is installed, the instructions of `BIN -- true` counted by
# callgrind (retry's own process, not the child): the one figure no load
# moves.
#
# The binaries are copied into a scratch directory first, so all of them
# start from the same page-cache state (bench/README.md: a binary the linker
# just wrote starts slower than a copy).
#
# Environment: STARTUP_ROUNDS (10), STARTUP_RUNS (start-up runs per round
# and command, 50), ATTEMPT_RUNS (per-attempt runs per round, 2), ATTEMPTS
# (1000); STARTUP_RESULTS, the file whose section "Start-up and per-attempt
# cost" is written (bench/RESULTS.md; replaced if present, the rest kept),
# or `-` for stdout only. Needs hyperfine, GNU time and Debian's `retry`
# (installed from Debian's packages when missing and root).
set -euo pipefail
cd "$(dirname "$0")/.."

need() { # need PATH PACKAGE
    command -v "$1" >/dev/null 2>&1 && return
    if [ "$(id -u)" != 0 ]; then
        echo "startup: $1 is missing (Debian package $2)" >&2
        exit 1
    fi
    echo "startup: installing $2" >&2
    if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq >&2; APT_UPDATED=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2
}
need hyperfine hyperfine
need python3 python3
need /usr/bin/time time
need /usr/bin/retry retry
if ! /usr/bin/retry --help 2>&1 | grep -q -- '--times'; then
    echo "startup: /usr/bin/retry is not Debian's retry (no --times)" >&2
    exit 1
fi

rounds=${STARTUP_ROUNDS:-10}
runs=${STARTUP_RUNS:-50}
attempt_runs=${ATTEMPT_RUNS:-2}
attempts=${ATTEMPTS:-1000}
out=${STARTUP_RESULTS:-bench/RESULTS.md}

if [ $# -eq 0 ]; then
    set -- "$(bash scripts/dist.sh x86_64-unknown-linux-musl 2>/dev/null)"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each binary as bN in the scratch directory, named in the table by its path.
names=()
for i in $(seq $#); do
    bin=${!i}
    [ -x "$bin" ] || { echo "startup: not an executable: $bin" >&2; exit 2; }
    cp "$bin" "$work/b$i"
    names+=("$bin")
done
TRUE=$(type -P true)
FALSE=$(type -P false)
PEER=/usr/bin/retry

start=("$TRUE" "$PEER -- $TRUE")
loop=("sh -c 'i=0; while [ \$i -lt $attempts ]; do $FALSE; i=\$((i+1)); done'" "$PEER --times=$attempts --delay=0 -- $FALSE")
for i in $(seq $#); do
    start+=("$work/b$i -- $TRUE")
    loop+=("$work/b$i -n $attempts --base 0ms -- $FALSE")
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$rounds"); do
    echo "startup: round $round of $rounds" >&2
    hyperfine -N --warmup $((runs / 10 + 1)) --runs "$runs" \
        --export-json "$work/start.$round.json" "${start[@]}" >/dev/null 2>&1
    hyperfine -N -i --runs "$attempt_runs" \
        --export-json "$work/loop.$round.json" "${loop[@]}" >/dev/null 2>&1
done

# Sizes, peak RSS and instructions, per binary.
: >"$work/static.tsv"
for i in $(seq $#); do
    size=$(wc -c <"$work/b$i")
    rss=$(for _ in 1 2 3 4 5 6 7 8 9 10 11; do
        /usr/bin/time -f %M "$work/b$i" -- "$TRUE" 2>&1 >/dev/null | tail -1
    done | sort -n | sed -n 6p)
    instructions=""
    if command -v valgrind >/dev/null 2>&1; then
        valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$work/b$i" -- "$TRUE" \
            >/dev/null 2>"$work/cg.err" || true
        instructions=$(sed -n 's/^summary: //p' "$work/cg.out" 2>/dev/null | head -1)
    fi
    printf '%s\t%s\t%s\t%s\n' "$i" "${size//[[:space:]]/}" "$rss" "$instructions" >>"$work/static.tsv"
done
rss_true=$(for _ in 1 2 3 4 5 6 7 8 9 10 11; do /usr/bin/time -f %M "$TRUE" 2>&1 >/dev/null | tail -1; done | sort -n | sed -n 6p)

python3 - "$work" "$rounds" "$attempts" "$rss_true" "${names[@]}" >"$work/table.md" <<'PY'
import glob, json, statistics, sys
work, rounds, attempts, rss_true, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5:]

def medians(kind):
    parts = [json.load(open(f"{work}/{kind}.{r}.json"))["results"] for r in range(1, rounds + 1)]
    return [statistics.median(t for part in parts for t in part[i]["times"]) for i in range(len(parts[0]))]

start, loop = medians("start"), medians("loop")
true_t, peer_start, builds_start = start[0], start[1], start[2:]
sh_loop, peer_loop, builds_loop = loop[0], loop[1], loop[2:]
static = {}
for line in open(f"{work}/static.tsv"):
    i, size, rss, ins = line.rstrip("\n").split("\t")
    static[int(i)] = (int(size), int(rss), ins)

def mib(b): return f"{b / 1048576:.2f} MiB"
head = "| figure | Debian's `retry` | " + " | ".join(f"`{n}`" for n in names) + " |"
print(head)
print("|---" * (len(names) + 2) + "|")
cols = range(1, len(names) + 1)
print("| binary size | | " + " | ".join(mib(static[i][0]) for i in cols) + " |")
print(f"| start-up (`-- true`), median | {peer_start * 1e3:.3f} ms | " + " | ".join(f"{t * 1e3:.3f} ms" for t in builds_start) + " |")
print("| start-up vs Debian's `retry` | 1.00× | " + " | ".join(f"{t / peer_start:.2f}×" for t in builds_start) + " |")
print("| start-up vs `true` | " + f"{peer_start / true_t:.2f}× | " + " | ".join(f"{t / true_t:.2f}×" for t in builds_start) + " |")
print(f"| peak RSS (`-- true`; `true`: {rss_true / 1024:.2f} MiB) | | " + " | ".join(mib(static[i][1] * 1024) for i in cols) + " |")
ins = [static[i][2] for i in cols]
if all(ins):
    print("| instructions of `-- true` (callgrind) | | " + " | ".join(f"{int(n):,}" for n in ins) + " |")
print(f"| {attempts} attempts vs a `sh` loop | {peer_loop / sh_loop:.2f}× | " + " | ".join(f"{t / sh_loop:.2f}×" for t in builds_loop) + " |")
print(f"| {attempts} attempts, median (`sh` loop: {sh_loop * 1e3:.1f} ms) | {peer_loop * 1e3:.1f} ms | " + " | ".join(f"{t * 1e3:.1f} ms" for t in builds_loop) + " |")
PY

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), Linux $(uname -r), $(date -u +%Y-%m-%d)"
section() {
    echo "## Start-up and per-attempt cost (bench/startup.sh)"
    echo
    echo "Produced by \`bash bench/startup.sh\` on: $machine; load average at the start $load."
    echo "$rounds rounds, each one hyperfine run of every start-up command ($runs runs each) and one of every per-attempt command ($attempt_runs runs each); medians over all rounds, ratios within the run."
    echo
    cat "$work/table.md"
}
if [ "$out" = - ]; then
    section
    exit 0
fi
# shellcheck source=bench/results.sh
. bench/results.sh
section | replace_section "$out" "## Start-up and per-attempt cost"
section
echo "startup: results in $out" >&2
