#!/usr/bin/env bash
# The size budget of the musl artifact, the Linux binary people download
# (issue 45): CI fails when it grows past the budget, so that no feature
# makes every download and every fresh runner pay for it unnoticed.
#
#   bash scripts/size-budget.sh        # builds the artifact (scripts/dist.sh) and checks it
#   bash scripts/size-budget.sh BIN    # checks BIN, built already
#
# To raise the budget, change BUDGET below in the same commit as what needs
# the bytes, and say there what they buy (bench/RESULTS.md has the figures
# by crate and by function).
set -euo pipefail
cd "$(dirname "$0")/.."

# 2.0 MiB, issue 45's aim: the artifact measured 2.74 MiB before that
# issue, 2.37 after its first cuts and 1.83 once std was built without its
# backtrace printer (scripts/dist.sh), so some 170 KB are left for what
# comes next. Raised to 2.10 MiB on 2026-12-06 for issue 52 and 53's
# failure classes, adaptive throttle and once-hooks, which took the
# artifact to 2,152,664 bytes (55 KB over 2.00 MiB, with the two-tier lean
# parse's second copy of the common groups' clap code): a debt, not a new
# aim. Issue 52 stays open until the artifact is back under 2.00 MiB.
BUDGET=2202009

case $# in
0) bin=$(bash scripts/dist.sh x86_64-unknown-linux-musl) ;;
1) bin=$1 ;;
*)
    echo "usage: bash scripts/size-budget.sh [BIN]" >&2
    exit 2
    ;;
esac
[ -f "$bin" ] || { echo "size-budget: no such file: $bin" >&2; exit 2; }
size=$(wc -c <"$bin")
size=${size//[[:space:]]/}

mib() { awk -v b="$1" 'BEGIN { printf "%.2f MiB (%d bytes)", b / 1048576, b }'; }
if [ "$size" -gt "$BUDGET" ]; then
    echo "size-budget: $bin is $(mib "$size"), over the budget of $(mib "$BUDGET")" >&2
    exit 1
fi
echo "size-budget: $bin is $(mib "$size"), within the budget of $(mib "$BUDGET")" >&2
