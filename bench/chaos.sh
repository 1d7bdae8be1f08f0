#!/usr/bin/env bash
# The reliability (chaos) test at scale: CHAOS_RUNS random scenarios of
# tests/integration/chaos/ against a release build, then the counts in
# bench/RESULTS.md, section "Reliability (chaos test)" (replaced if present).
# One run in four is a real claimed command instead of `sh -c`: curl, GNU
# wget, BusyBox's wget, git ls-remote, git push, pip download or npm
# install, with no --preset (the preset chosen by the program's name),
# against a server of the test's on 127.0.0.1 (or a pre-push hook) that
# fails transiently a drawn number of times, then answers; "a transient
# failure not retried" is a violation. Those not installed are skipped and
# counted (apt-get install curl wget git busybox-static python3-pip npm).
#
#   bash bench/chaos.sh                          # 300 runs, a random first seed, ~1-2 min
#   CHAOS_RUNS=50 CHAOS_SEED=7 bash bench/chaos.sh
#
# The plain release build (target/release/retry, what `cargo install`
# gives), because it is what users run (panic = "abort", LTO), on any host,
# and because 64 MiB outputs through --retry-if-output take seconds in a
# debug build. The test harness stays a debug build (cheap to build); it
# runs the binary named by RETRY_BIN_UNDER_TEST. No network (--offline;
# the claimed commands reach only the test's loopback servers: npm
# --offline, pip without its version check).
# The downloadable artifact (the same code, linked statically) instead:
#   RETRY_BIN_UNDER_TEST=$(bash scripts/dist.sh) bash bench/chaos.sh
# Exits 1 if any invariant was violated, after writing the results.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${CHAOS_RUNS:-300}
seed=${CHAOS_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
# Far above what 300 runs take; each run has its own 20 s watchdog too.
limit=${CHAOS_LIMIT:-900}

# The log, and the test's own TMPDIR: a test killed on the way out cannot
# remove its scratch directory (up to 70 MB; the claimed commands' homes,
# repositories and npm and pip files too), so this script does.
work=$(mktemp -d)
log=$work/log
# Every process of the run, setsid'd grandchildren included, inherits this
# variable: the clean-up finds them by it, whatever their process group.
marker="retry-chaos-bench-$$-$RANDOM"
cleanup() {
    local env pid
    for env in /proc/[0-9]*/environ; do
        pid=${env#/proc/}
        pid=${pid%/environ}
        if grep -qzxF "CHAOS_BENCH=$marker" "$env" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

cargo build --release --offline --quiet
cargo test --offline --quiet --test integration --no-run
bin=${RETRY_BIN_UNDER_TEST:-$PWD/target/release/retry}
test=chaos::random_commands_faults_and_signals_keep_every_invariant
echo "chaos: $runs runs against $bin, seeds $seed.. (limit ${limit}s)" >&2

start=$(date +%s)
# In the background, so that a signal to this script is acted on at once.
CHAOS_BENCH=$marker TMPDIR=$work RETRY_BIN_UNDER_TEST=$bin CHAOS_RUNS=$runs CHAOS_SEED=$seed \
    timeout --kill-after=5 "$limit" \
    cargo test --offline --quiet --test integration "$test" -- --exact --nocapture >"$log" 2>&1 &
wait $! && status=0 || status=$?
seconds=$(( $(date +%s) - start ))

# Not anchored: libtest's terse progress may precede a line.
summary=$(grep -m1 -oE 'chaos: [0-9]+ runs, [0-9]+ faults injected, [0-9]+ invariant violations' "$log" || true)
if [ -z "$summary" ]; then
    tail -n 30 "$log" >&2
    [ "$status" = 124 ] && echo "chaos: did not finish within ${limit}s" >&2
    echo "chaos: no summary; bench/RESULTS.md left as it was" >&2
    exit 1
fi
kinds=$(grep -m1 -oE 'chaos: faults by kind: [^;]*' "$log" | sed 's/^chaos: faults by kind: //')
claimed=$(grep -m1 -oE 'chaos: claimed commands: .*' "$log" | sed 's/^chaos: claimed commands: //')
violations=$(echo "$summary" | sed -E 's/.* ([0-9]+) invariant violations.*/\1/')
echo "$summary"
echo "chaos: faults by kind: $kinds"
echo "chaos: claimed commands: $claimed"
echo "chaos: $seconds s"

machine="$(nproc) cores, $(uname -srm), $(date -u +%Y-%m-%d)"
results=bench/RESULTS.md
# shellcheck source=bench/results.sh
. bench/results.sh
{
    echo "## Reliability (chaos test)"
    echo
    echo "Produced by \`bash bench/chaos.sh\` on: $machine; binary ${bin#"$PWD"/}, seeds $seed to $(( seed + runs - 1 )), $seconds s."
    echo "What a run does and the invariants checked after it: tests/integration/chaos/ and docs/behaviour.md (Reliability)."
    echo
    echo "| runs | faults injected | invariant violations |"
    echo "|---|---|---|"
    echo "$summary" | sed -E 's/^chaos: ([0-9]+) runs, ([0-9]+) faults injected, ([0-9]+) invariant violations$/| \1 | \2 | \3 |/'
    echo
    echo "Faults by kind: $kinds."
    echo
    echo "Claimed commands (a real program, the preset chosen by its name, against a loopback server failing transiently): $claimed."
    if [ "$violations" != 0 ]; then
        echo
        echo "Violations (replay one with \`CHAOS_SEED=<seed> CHAOS_RUNS=1 RETRY_BIN_UNDER_TEST=target/release/retry cargo test --test integration chaos -- --nocapture\`):"
        echo
        echo '```text'
        awk '/chaos: violation, / { keep = 1; sub(/^.*chaos: violation, /, ""); print; next } keep && /^    / { print; next } { keep = 0 }' "$log"
        echo '```'
    fi
} | replace_section "$results" "## Reliability (chaos test)"
echo "chaos: results in $results" >&2
[ "$violations" = 0 ]
