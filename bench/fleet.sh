#!/usr/bin/env bash
# --simulate for fleets: seconds, nanoseconds per simulated request and peak
# memory at 10^3, 10^4 and 10^5 clients, one repetition, for both models;
# and every strategy of the busy model at 10^5 clients. Writes the section
# "Fleets" of bench/RESULTS.md (replaced if present, the rest kept).
#
#   bash bench/fleet.sh        # ≈ 3 minutes on 2 cores
#
# Seconds are CPU seconds (user + system) of the one thread a single
# repetition runs on: on a shared machine they move less than wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin retry
RETRY=target/x86_64-unknown-linux-gnu/release/retry
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

# One row: model, strategy, clients, then CPU seconds, requests, ns each, MiB.
measure() {
    local model=$1 jitter=$2 clients=$3 out
    out=$(/usr/bin/time -f 'TIME %U %S %M' "$RETRY" --simulate --model "$model" --jitter "$jitter" \
        --clients "$clients" --reps 1 --seed 1 --format csv 2>&1)
    python3 - "$model" "$jitter" "$clients" "$out" >>"$rows" <<'PY'
import sys
model, jitter, clients, out = sys.argv[1:]
row = next(l for l in out.splitlines() if l.startswith(jitter + ","))
fields = row.split(",")
user, system, kib = next(l for l in out.splitlines() if l.startswith("TIME")).split()[1:]
seconds = float(user) + float(system)
work = float(fields[3])
capped = " (capped)" if len(fields) > (8 if model == "busy" else 7) and fields[-1] != "0" else ""
print(f"| {model} | {jitter} | {int(clients):,} | {seconds:.2f} | {work:,.0f}{capped} | {seconds / work * 1e9:.0f} | {int(kib) / 1024:.0f} |")
PY
    tail -1 "$rows" >&2
}

for model in occ busy; do
    for clients in 1000 10000 100000; do
        measure "$model" full "$clients"
    done
done
for jitter in none equal decorrelated no-backoff; do
    measure busy "$jitter" 100000
done

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), Linux $(uname -r), $(date -u +%Y-%m-%d)"
load=$(cut -d' ' -f1-3 /proc/loadavg)
results=bench/RESULTS.md
{
    [ -f "$results" ] && awk '/^## Fleets/ { skip = 1; next } /^## / { skip = 0 } !skip' "$results" |
        sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
    echo
    echo "## Fleets (--simulate at 10^3 to 10^5 clients)"
    echo
    echo "Produced by \`bash bench/fleet.sh\` on: $machine; load average at the end $load (a shared machine: the CPU seconds of a busy neighbour's turn are not counted, but its cache is shared)."
    echo "One repetition, seed 1: \`retry --simulate --model MODEL --jitter STRATEGY --clients N --reps 1\`. Seconds are CPU seconds; a request is a conditional write (occ) or a request to the server (busy); memory is the peak RSS. \`(capped)\`: stopped at \`--max-work\` (100 million)."
    echo
    echo "| model | strategy | clients | seconds | requests | ns per request | peak MiB |"
    echo "|---|---|---|---|---|---|---|"
    cat "$rows"
} >"$results.new"
mv "$results.new" "$results"
echo "fleet: results in $results" >&2
