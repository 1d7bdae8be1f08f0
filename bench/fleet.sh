#!/usr/bin/env bash
# --simulate for fleets: seconds, nanoseconds per simulated request and peak
# memory at 10^3, 10^4 and 10^5 clients, for both models (full jitter); and
# every strategy of the busy model at 10^5 clients, one repetition. Writes the section
# "Fleets" of bench/RESULTS.md (replaced if present, the rest kept).
#
#   bash bench/fleet.sh        # ≈ 2 minutes on 2 cores
#
# Seconds are CPU seconds (user + system): on a shared machine they move
# less than wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin retry
RETRY=target/release/retry
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

# One row: model, strategy, clients, then CPU seconds, requests, ns each, MiB.
# Small fleets run more repetitions (REPS), so the seconds are measurable;
# `all` sums the rows of `--jitter all` (five strategies on all cores).
measure() {
    local model=$1 jitter=$2 clients=$3 reps=$4 out
    out=$(/usr/bin/time -f 'TIME %U %S %M' "$RETRY" --simulate --model "$model" --jitter "$jitter" \
        --clients "$clients" --reps "$reps" --seed 1 --format csv 2>&1)
    python3 - "$model" "$jitter" "$clients" "$reps" "$out" >>"$rows" <<'PY'
import sys
model, jitter, clients, reps, out = sys.argv[1:]
lines = out.splitlines()
header = next(l for l in lines if l.startswith("strategy,")).split(",")
data = [dict(zip(header, l.split(","))) for l in lines if l.split(",")[0] in
        ("none", "full", "equal", "decorrelated", "no-backoff")]
user, system, kib = next(l for l in lines if l.startswith("TIME")).split()[1:]
seconds = float(user) + float(system)
requests = sum(float(r["work_mean"]) * int(r["reps"]) for r in data)
capped = sum(int(r.get("capped", 0)) for r in data)
note = f" ({capped} capped)" if capped else ""
print(f"| {model} | {jitter} | {int(clients):,} | {reps} | {seconds:.2f} | {requests:,.0f}{note} | {seconds / requests * 1e9:.0f} | {int(kib) / 1024:.0f} |")
PY
    tail -1 "$rows" >&2
}

for model in occ busy; do
    measure "$model" full 1000 500
    measure "$model" full 10000 5
    measure "$model" full 100000 1
done
for jitter in none equal decorrelated all; do
    measure busy "$jitter" 100000 1
done

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), Linux $(uname -r), $(date -u +%Y-%m-%d)"
load=$(cut -d' ' -f1-3 /proc/loadavg)
results=bench/RESULTS.md
# shellcheck source=bench/results.sh
. bench/results.sh
{
    echo "## Fleets (--simulate at 10^3 to 10^5 clients)"
    echo
    echo "Produced by \`bash bench/fleet.sh\` on: $machine; load average at the end $load (a shared machine: the CPU seconds of a busy neighbour's turn are not counted, but its cache is shared)."
    echo "Seed 1: \`retry --simulate --model MODEL --jitter STRATEGY --clients N --reps R\`. Seconds are CPU seconds (all threads); a request is a conditional write (occ) or a request to the server (busy), summed over repetitions and strategies; memory is the peak RSS. \`capped\`: repetitions stopped at \`--max-work\` (100 million requests)."
    echo
    echo "| model | strategy | clients | reps | CPU seconds | requests | ns per request | peak MiB |"
    echo "|---|---|---|---|---|---|---|---|"
    cat "$rows"
} | replace_section "$results" "## Fleets"
echo "fleet: results in $results" >&2
