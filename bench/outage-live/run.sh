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
#   REPS=5 bash bench/outage-live/run.sh caps            # the cap study, ≈ 6 minutes
#
# Time runs at 1/30 of the outage table's (docs/simulation.md): a 1 s
# cooldown for 30 s, and a cap of 8 s for the default 4 minutes. `caps`
# is the recovery lag of three caps (issue 44): the breakers alone, with
# caps of 2, 4 and 8 s (1, 2 and 4 minutes), which the 20 s outage gives
# the cooldown time to double up to; 20 hosts and 14 requests a second
# (the same 1.4 × the first attempts), so its 6 rows start 60 runs a
# second, not 9 rows' 225, on a shared machine. It writes to
# bench/outage-live/caps/ and the section "An outage, live, by cap".
#
# Bounded: LIMIT seconds in all (default 600), each repetition at most
# its span and 25 s, and every retry gets --max-time. Loopback and a unix
# socket only. The driver runs in a process group of its own; every exit
# path of this script (Ctrl-C included) ends that group, stops redis and
# removes the temporary directory (the hosts' runtime directories and
# redis's socket).
set -euo pipefail
cd "$(dirname "$0")/../.."
case ${1:-} in
'') section="An outage, live" ;;
caps)
    section="An outage, live, by cap"
    : "${POLICIES:=host-breaker,fleet-breaker}" "${CAPS:=2,4,8}" "${HOSTS:=20}" "${CAPACITY:=14}"
    : "${OUT:=bench/outage-live/caps}"
    ;;
*) echo "usage: bash bench/outage-live/run.sh [caps]" >&2; exit 2 ;;
esac
POLICIES=${POLICIES:-none,host-budget,fleet-budget,host-breaker,fleet-breaker}
HOSTS=${HOSTS:-50}
EVERY=${EVERY:-2}
OUTAGE=${OUTAGE:-20}
CAPACITY=${CAPACITY:-35}
SPAN=${SPAN:-60}
REPS=${REPS:-4}
SIM_REPS=${SIM_REPS:-40}
CAPS=${CAPS:-8}
LIMIT=${LIMIT:-600}
OUT=${OUT:-bench/outage-live}

cargo build --release --quiet --bin retry --example contention
target=target/release
# shellcheck source=bench/lib/live.sh
. bench/lib/live.sh
live_redis outage-live
live_driver "$target/examples/contention" outage --retry "$target/retry" --tmp "$tmp" \
    --store "unix://$tmp/redis.sock" --hosts "$HOSTS" --every "$EVERY" --outage "$OUTAGE" \
    --capacity "$CAPACITY" --span "$SPAN" --reps "$REPS" --sim-reps "$SIM_REPS" \
    --policies "$POLICIES" --caps "$CAPS" \
    --limit "$LIMIT" --out "$OUT"
live_machine "$OUT/agreement.md"
echo "wrote $OUT/{live.csv,sim.csv,agreement.md,outage.svg}"
case $OUT in
bench/outage-live) command="bash bench/outage-live/run.sh" ;;
bench/outage-live/caps) command="bash bench/outage-live/run.sh caps" ;;
*) exit 0 ;;
esac

# The section "$section" of bench/RESULTS.md (replaced if present, the
# rest kept), as bench/outage.sh writes its own.
results=bench/RESULTS.md
dir=${OUT#bench/}
# shellcheck source=bench/results.sh
. bench/results.sh
{
    echo "## $section: \`$command\`"
    echo
    echo "Real \`retry\` processes against the loopback server with an outage window, beside \`--simulate --model outage\` with the same parameters; the chart is [$dir/outage.svg]($dir/outage.svg), the rows [$dir/live.csv]($dir/live.csv) and [$dir/sim.csv]($dir/sim.csv)."
    echo
    cat "$OUT/agreement.md"
} | replace_section "$results" "## $section: "
echo "outage-live: results in $results" >&2
