#!/usr/bin/env bash
# --simulate --model outage: the table the circuit breaker's defaults come
# from (docs/simulation.md, "Choosing the defaults"), the recovery lag of
# each cap (--breaker-cooldown-max), and the time a fleet of 10,000 hosts
# over an hour takes. Writes the section "An outage, simulated" of
# bench/RESULTS.md (replaced if present, the rest kept).
#
#   bash bench/outage.sh        # ≈ 1 minute on 2 cores, once built
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin retry
RETRY=target/release/retry
table=$(mktemp) caps=$(mktemp) big=$(mktemp)
trap 'rm -f "$table" "$caps" "$big"' EXIT

# The representative setup: 2,000 hosts every minute, a 15-minute outage,
# then 50 requests a second (a third above the fleet's 33 first attempts a
# second; all 2,000 at once would be 40 times too many).
# Every breaker with the default cap (4m, named so the command says it).
SETUP=(--simulate --model outage --hosts 2000 --every 60s --outage 15m --capacity 50 --span 1h)
TABLE=("${SETUP[@]}" --breaker-afters 1,3,5 --breaker-cooldowns 15s,30s,1m,2m
    --breaker-cooldown-maxes 4m --seed 1)
/usr/bin/time -f 'TIME %e %U %S %M' "$RETRY" "${TABLE[@]}" --format csv >"$table" 2>&1
# The cap: the default breaker (after 3, 30 s) with caps below the
# default and above it; the recovery lag is the cap's to bound.
CAPS=("${SETUP[@]}" --breaker-afters 3 --breaker-cooldowns 30s
    --breaker-cooldown-maxes 1m,2m,4m,8m --seed 1)
/usr/bin/time -f 'TIME %e %U %S %M' "$RETRY" "${CAPS[@]}" --format csv >"$caps" 2>&1
# Scale: 10,000 hosts for an hour, one repetition of six rows, with a
# capacity that lets them recover (167 first attempts a second).
BIG=(--simulate --model outage --hosts 10000 --every 60s --outage 15m --capacity 200 --span 1h
    --breaker-afters 3 --breaker-cooldowns 30s --reps 1 --seed 1)
/usr/bin/time -f 'TIME %e %U %S %M' "$RETRY" "${BIG[@]}" --format csv >"$big" 2>&1

markdown() {
    python3 - "$1" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
rows = [l.split(",") for l in lines if not l.startswith("TIME")]
print("| " + " | ".join(rows[0]) + " |")
print("|---|---|" + "---:|" * (len(rows[0]) - 2))
for r in rows[1:]:
    print("| " + " | ".join(c or "-" for c in r) + " |")
wall, user, system, kib = next(l for l in lines if l.startswith("TIME")).split()[1:]
print()
print(f"{float(wall):.1f} s wall, {float(user) + float(system):.1f} CPU seconds, {int(kib) / 1024:.0f} MiB peak, {len(rows) - 1} rows.")
PY
}

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), Linux $(uname -r), $(date -u +%Y-%m-%d)"
load=$(cut -d' ' -f1-3 /proc/loadavg)
results=bench/RESULTS.md
# shellcheck source=bench/results.sh
. bench/results.sh
{
    echo "## An outage, simulated: \`bash bench/outage.sh\`"
    echo
    echo "Produced by \`bash bench/outage.sh\` on: $machine; load average at the end $load (a shared machine)."
    echo "Lags are seconds from the recovery to a host's first success (the median host and the last); \`over_capacity\`: repetitions whose busiest second of the first minute after the recovery exceeded \`--capacity\`; counts are means over the repetitions."
    echo
    echo "\`retry ${TABLE[*]}\`:"
    echo
    markdown "$table"
    echo
    echo "\`retry ${CAPS[*]}\`:"
    echo
    markdown "$caps"
    echo
    echo "\`retry ${BIG[*]}\`:"
    echo
    markdown "$big"
} | replace_section "$results" "## An outage, simulated"
echo "outage: results in $results" >&2
