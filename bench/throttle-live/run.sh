#!/usr/bin/env bash
# The throttle experiment with real processes: a loopback server that
# admits CAPACITY requests in each WINDOW ms and answers 429 past it
# (with `Retry-After` in the retry-after cells), and fleets of real
# `retry` processes, for each cell of a matrix (an arrival shape, a load,
# a hint and a row of the simulation's table: no retries, backoff as it
# was, the throttle base, the budgets with the old and the 2026 costs,
# the breakers, the adaptive throttles, the throttles with budgets; each
# host's state, or the fleet's in a redis-server this script starts);
# beside it, `retry --simulate --model throttle` with the same parameters
# (`--capacity-window`). Writes, in this directory: live.csv and sim.csv
# (one row per repetition and cell), agreement.md and throttle.svg, and
# the section "Throttles, live" of bench/RESULTS.md.
#
#   bash bench/throttle-live/run.sh                      # ≈ 9 minutes on 2 cores
#   REPS=1 SPAN=10 bash bench/throttle-live/run.sh        # a quick look
#   CELLS='clients/2/retry-after/all' bash bench/throttle-live/run.sh   # other cells
#   GATE=retry CELLS='cron/2/none/fleet-throttle' OUT=/tmp/t bash bench/throttle-live/run.sh
#       # the gate on retry itself where it decides before its first attempt
#
# Time runs at 1/30 of the throttle table's (docs/simulation.md): a job
# every 2 s for every minute, backoff 33 ms to 667 ms, the throttle base
# 333 ms for 10 s, the throttle's window 4 s for 2 minutes, the breaker's
# cooldown 1 s for 30 s. The limiter's window is 500 ms (2 requests in
# each: 4 a second), so that 0.5×, 2× and 10× the capacity are 4, 16 and
# 80 hosts (or clients) a cell.
#
# The default matrix (CELLS; the driver's DEFAULT_CELLS says why) runs
# every row of the table at 0.5× and 2× for the cron fleet without hints,
# and at 10×, with Retry-After, and for the clients the rows that differ
# there: the throttle base and the fleet's throttle everywhere, backoff
# as it was and each host's throttle at 0.5× and 2×. Left out, to stay
# under 10 minutes on 2 cores: the budgets', breakers' and the throttles
# with budgets' rows at 10×, with hints and for the clients (in the
# simulation those cells equal the throttle base's or the fleet
# throttle's rows to within a point: docs/simulation.md, "Throttles").
#
# Bounded: LIMIT seconds in all (default 600; a repetition is not begun
# that would not end in time), each batch at most its span and 25 s, at
# most BATCH hosts started at once, and every retry gets --max-time.
# Loopback and a unix socket only. The driver runs in a process group of
# its own; every exit path of this script (Ctrl-C included) ends that
# group, stops redis and removes the temporary directory (the hosts'
# runtime directories and redis's socket): bench/lib/live.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
CAPACITY=${CAPACITY:-2}
WINDOW=${WINDOW:-500}
EVERY=${EVERY:-2}
SPAN=${SPAN:-20}
CELLS=${CELLS:-}
BATCH=${BATCH:-160}
GATE=${GATE:-attempt}
REPS=${REPS:-4}
SIM_REPS=${SIM_REPS:-40}
LIMIT=${LIMIT:-600}
OUT=${OUT:-bench/throttle-live}

cargo build --release --quiet --bin retry --example contention
target=target/release
# shellcheck source=bench/lib/live.sh
. bench/lib/live.sh
live_redis throttle-live
live_driver "$target/examples/contention" throttle --retry "$target/retry" --tmp "$tmp/hosts" \
    --store "unix://$tmp/redis.sock" --capacity "$CAPACITY" --window "$WINDOW" \
    --every "$EVERY" --span "$SPAN" ${CELLS:+--cells "$CELLS"} --batch "$BATCH" --gate "$GATE" \
    --reps "$REPS" --sim-reps "$SIM_REPS" --limit "$LIMIT" --out "$OUT"
live_machine "$OUT/agreement.md"
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
    # The reasons are written by hand, for the figures of the run they
    # explain: kept here, so a rerun of the bench does not drop them.
    echo
    echo "**Where the figures differ, and why** (bench/throttle-live/why.md, written by hand for the run above: revise it with the figures when the bench is rerun):"
    echo
    cat bench/throttle-live/why.md
} | replace_section "$results" "## $section: "
echo "throttle-live: results in $results" >&2
