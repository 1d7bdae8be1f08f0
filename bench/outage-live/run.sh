#!/usr/bin/env bash
# The outage experiment with real processes: the loopback server of
# bench/contention down for the outage, then serving its capacity a
# second, and a cron fleet of real `retry` processes under each policy
# (none, host budgets, a fleet budget, a breaker per host and one for the
# fleet, the fleet's state in a redis-server this script starts; each
# breaker once for each of CAPS, its --breaker-cooldown-max); beside
# it, `retry --simulate --model outage` with the same parameters. Writes,
# in this directory: live.csv and sim.csv (one row per repetition and
# policy), agreement.md and outage.svg (both on the same axes), and the
# section "An outage, live" of bench/RESULTS.md.
#
#   bash bench/outage-live/run.sh                        # ≈ 5 minutes on 2 cores
#   REPS=1 HOSTS=10 SPAN=20 OUTAGE=8 bash bench/outage-live/run.sh   # a quick look
#
# Time runs at 1/30 of the outage table's (docs/behaviour.md): a 1 s
# cooldown for 30 s, and CAPS (seconds) 2,4,8 for caps of 1, 2 and 4
# minutes (the default), which the 20 s outage gives the cooldown time to
# double up to.
#
# Bounded: LIMIT seconds in all (default 600), each repetition at most
# its span and 25 s, and every retry gets --max-time. Loopback and a unix
# socket only. The driver runs in a process group of its own; every exit
# path of this script (Ctrl-C included) ends that group, stops redis and
# removes the temporary directory (the hosts' runtime directories and
# redis's socket).
set -euo pipefail
cd "$(dirname "$0")/../.."
HOSTS=${HOSTS:-50}
EVERY=${EVERY:-2}
OUTAGE=${OUTAGE:-20}
CAPACITY=${CAPACITY:-35}
SPAN=${SPAN:-60}
REPS=${REPS:-4}
SIM_REPS=${SIM_REPS:-40}
CAPS=${CAPS:-2,4,8}
LIMIT=${LIMIT:-600}
OUT=${OUT:-bench/outage-live}

cargo build --release --quiet --bin retry --example contention
target=target/release
command -v redis-server >/dev/null || { echo "outage-live: redis-server is missing (apt-get install redis-server)" >&2; exit 1; }

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
[ -S "$tmp/redis.sock" ] || { echo "outage-live: redis-server did not start" >&2; exit 1; }

set -m # the driver gets a process group of its own
"$target/examples/contention" outage --retry "$target/retry" --tmp "$tmp" \
    --store "unix://$tmp/redis.sock" --hosts "$HOSTS" --every "$EVERY" --outage "$OUTAGE" \
    --capacity "$CAPACITY" --span "$SPAN" --reps "$REPS" --sim-reps "$SIM_REPS" --caps "$CAPS" \
    --limit "$LIMIT" --out "$OUT" &
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
echo "wrote $OUT/{live.csv,sim.csv,agreement.md,outage.svg}"
[ "$OUT" = bench/outage-live ] || exit 0

# The section "An outage, live" of bench/RESULTS.md (replaced if present,
# the rest kept), as bench/outage.sh writes its own.
results=bench/RESULTS.md
{
    [ -f "$results" ] && awk '/^## An outage, live/ { skip = 1; next } /^## / { skip = 0 } !skip' "$results" |
        sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
    echo
    echo "## An outage, live: \`bash bench/outage-live/run.sh\`"
    echo
    echo "Real \`retry\` processes against the loopback server with an outage window, beside \`--simulate --model outage\` with the same parameters; the chart is [outage-live/outage.svg](outage-live/outage.svg), the rows [outage-live/live.csv](outage-live/live.csv) and [outage-live/sim.csv](outage-live/sim.csv)."
    echo
    cat "$OUT/agreement.md"
} >"$results.new"
mv "$results.new" "$results"
echo "outage-live: results in $results" >&2
