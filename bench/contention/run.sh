#!/usr/bin/env bash
# The contention experiment with real processes: a server on 127.0.0.1 that
# serves one request at a time (|Normal(10, 4)| ms, 503 while busy) and N
# `retry` processes started at once, for each strategy; beside it the same
# experiment simulated (`retry --simulate --model busy`). Writes, in this
# directory: live.csv and sim.csv (the --simulate columns), agreement.md
# (simulated work against the live spread, row by row) and contention.svg
# (both on the same axes).
#
#   bash bench/contention/run.sh                  # ≈ 8 minutes on 2 cores
#   CLIENTS=5,20 REPS=2 bash bench/contention/run.sh   # a quick look
#
# Bounded: LIMIT seconds in all (default 600), and every retry gets
# --max-time. Loopback only. The driver runs in a process group of its
# own, and every exit path of this script (Ctrl-C included) ends that
# group: no process or port is left behind; it writes no temporary files.
set -euo pipefail
cd "$(dirname "$0")/../.."
CLIENTS=${CLIENTS:-10,40,70,100}
REPS=${REPS:-3}
LIMIT=${LIMIT:-600}
OUT=${OUT:-bench/contention}

cargo build --release --quiet --bin retry --example contention
target=target/release

# shellcheck source=bench/lib/live.sh
. bench/lib/live.sh
live_driver "$target/examples/contention" run --retry "$target/retry" --clients "$CLIENTS" \
    --reps "$REPS" --limit "$LIMIT" --out "$OUT"
live_machine "$OUT/agreement.md"
echo "wrote $OUT/{live.csv,sim.csv,agreement.md,contention.svg}"
