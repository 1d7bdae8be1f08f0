#!/usr/bin/env bash
# The throttle experiment with real processes: a loopback server that
# admits CAPACITY requests in each WINDOW ms and answers 429 past it, and
# a cron fleet of real `retry` processes that all start their job at each
# mark, for each load and row (no retries, backoff as it was, the throttle
# base, each host's adaptive throttle, the fleet's in a redis-server this
# script starts); beside it, `retry --simulate --model throttle` with the
# same parameters (`--capacity-window`). Writes, in this directory:
# live.csv and sim.csv (one row per repetition, load and row),
# agreement.md and throttle.svg, and the section "Throttles, live" of
# bench/RESULTS.md.
#
#   bash bench/throttle-live/run.sh                      # ≈ 6 minutes on 2 cores
#   REPS=1 SPAN=10 bash bench/throttle-live/run.sh        # a quick look
#
# Time runs at 1/30 of the throttle table's (docs/simulation.md): a job
# every 2 s for every minute, backoff 33 ms to 667 ms, the throttle base
# 333 ms for 10 s, the throttle's window 4 s for 2 minutes. The limiter's
# window is 500 ms (4 requests in each: 8 a second), so that 0.5× and 2×
# the capacity are 8 and 32 hosts a row, 40 and 160 processes at a mark.
#
# Bounded: LIMIT seconds in all (default 600), each load of a repetition
# at most its span and 25 s, and every retry gets --max-time. Loopback
# and a unix socket only. The driver runs in a process group of its own;
# every exit path of this script (Ctrl-C included) ends that group, stops
# redis and removes the temporary directory (the hosts' runtime
# directories and redis's socket).
set -euo pipefail
cd "$(dirname "$0")/../.."
CAPACITY=${CAPACITY:-4}
WINDOW=${WINDOW:-500}
EVERY=${EVERY:-2}
SPAN=${SPAN:-30}
LOADS=${LOADS:-0.5,2}
ROWS=${ROWS:-none,backoff,throttle-base,host-throttle,fleet-throttle}
REPS=${REPS:-4}
SIM_REPS=${SIM_REPS:-40}
LIMIT=${LIMIT:-600}
OUT=${OUT:-bench/throttle-live}

cargo build --release --quiet --bin retry --example contention
target=target/release
command -v redis-server >/dev/null || { echo "throttle-live: redis-server is missing (apt-get install redis-server)" >&2; exit 1; }

tmp=$(mktemp -d)
redis= driver=
cleanup() {
    [ -n "$driver" ] && kill -TERM -- "-$driver" 2>/dev/null || true
    [ -n "$redis" ] && kill "$redis" 2>/dev/null && wait "$redis" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

redis-server --port 0 --unixsocket "$tmp/redis.sock" --unixsocketperm 700 \
    --save '' --appendonly no --dir "$tmp" --logfile "$tmp/redis.log" &
redis=$!
for _ in $(seq 100); do [ -S "$tmp/redis.sock" ] && break; sleep 0.05; done
[ -S "$tmp/redis.sock" ] || { echo "throttle-live: redis-server did not start" >&2; exit 1; }

set -m # the driver gets a process group of its own
"$target/examples/contention" throttle --retry "$target/retry" --tmp "$tmp/hosts" \
    --store "unix://$tmp/redis.sock" --capacity "$CAPACITY" --window "$WINDOW" \
    --every "$EVERY" --span "$SPAN" --loads "$LOADS" --rows "$ROWS" \
    --reps "$REPS" --sim-reps "$SIM_REPS" --limit "$LIMIT" --out "$OUT" &
driver=$!
wait "$driver"
driver=

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr), $(date -u +%F)"
load="load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
{
    echo "Machine: $machine; $load."
    echo
    cat "$OUT/agreement.md"
} >"$OUT/agreement.md.new"
mv "$OUT/agreement.md.new" "$OUT/agreement.md"
echo "wrote $OUT/{live.csv,sim.csv,agreement.md,throttle.svg}"
[ "$OUT" = bench/throttle-live ] || exit 0

# The section of bench/RESULTS.md (replaced if present, the rest kept),
# as bench/outage-live/run.sh writes its own.
section="Throttles, live"
results=bench/RESULTS.md
# shellcheck source=bench/results.sh
. bench/results.sh
{
    echo "## $section: \`bash bench/throttle-live/run.sh\`"
    echo
    echo "Real \`retry\` processes against the loopback rate-limited server, beside \`--simulate --model throttle\` with the same parameters; the chart is [throttle-live/throttle.svg](throttle-live/throttle.svg), the rows [throttle-live/live.csv](throttle-live/live.csv) and [throttle-live/sim.csv](throttle-live/sim.csv)."
    echo
    cat "$OUT/agreement.md"
} | replace_section "$results" "## $section: "
echo "throttle-live: results in $results" >&2
