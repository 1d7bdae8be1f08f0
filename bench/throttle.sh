#!/usr/bin/env bash
# What --throttle costs an attempt (issue 52: at most 0.2 ms with the host's
# file, at most 1 ms at the 99th percentile over 1,000 attempts with a
# local Redis), against a baseline measured in the same run:
#
#   end to end   hyperfine -N, `retry -n N --base 0ms -- false` without a
#                throttle (the baseline), with `--throttle` on the host's
#                file, and with it in a redis-server on 127.0.0.1 started
#                here; K so large that nothing is rejected, so each run makes
#                its N attempts and each asks once (one success first
#                gives K its accept to multiply): the added time per
#                attempt, and the ratio to the baseline
#   per decision release unit tests, each decision timed alone, in a row:
#                the host's file (lock, read, rule, write, unlock) and one
#                script call over loopback to the same redis-server, beside
#                a script that does nothing through the same seam (the
#                baseline: the thread, the round trip); median and p99 of
#                THROTTLE_DECISIONS
#
#   bash bench/throttle.sh              # ~2 minutes on 2 cores, release builds included
#
# THROTTLE_BIN: the retry to measure (else the release build); THROTTLE_QUICK=1
# leaves out the per-decision tests (they build the release unit tests) and
# the verdict (for the suite's smoke test, on a debug build);
# THROTTLE_ATTEMPTS (200), THROTTLE_ROUNDS (5) of THROTTLE_RUNS (10) runs of
# each, THROTTLE_DECISIONS (1000);
# THROTTLE_RESULTS, the file whose section "The adaptive throttle's cost" is
# written (bench/RESULTS.md; replaced if present, the rest kept; `-`: stdout
# only). redis-server and every file are removed on every exit path
# (bench/lib/live.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in hyperfine; do
    command -v "$tool" >/dev/null || { echo "throttle: needs $tool" >&2; exit 1; }
done

attempts=${THROTTLE_ATTEMPTS:-200}
runs=${THROTTLE_RUNS:-10}
rounds=${THROTTLE_ROUNDS:-5}
decisions=${THROTTLE_DECISIONS:-1000}
quick=${THROTTLE_QUICK:-}
out=${THROTTLE_RESULTS:-bench/RESULTS.md}
if [[ -n ${THROTTLE_BIN:-} ]]; then
    retry=$THROTTLE_BIN
else
    cargo build --release --quiet --bin retry
    retry=$PWD/target/release/retry
fi

# shellcheck source=bench/lib/live.sh
. bench/lib/live.sh
live_redis_tcp throttle
work=$tmp
echo "throttle: work dir $work, redis-server pid $redis on 127.0.0.1:$port" >&2
export XDG_RUNTIME_DIR=$work

# Nothing rejected: each run makes its attempts, each asking once. With K
# that large, one accept in the window outweighs any number of requests:
# one success first, in each store, and a window longer than the bench.
loose="--throttle bench --throttle-k 1e9 --throttle-window 24h"
"$retry" $loose -- true
"$retry" $loose --store "$store" -- true
# Rounds of all three in turn: a load that comes and goes falls on each.
for round in $(seq "$rounds"); do
    hyperfine -N -i --warmup 2 --runs "$runs" --export-json "$work/runs-$round.json" \
        "$retry -n $attempts --base 0ms -- false" \
        "$retry -n $attempts --base 0ms $loose -- false" \
        "$retry -n $attempts --base 0ms $loose --store $store -- false" >/dev/null 2>"$work/hyperfine.err" ||
        { cat "$work/hyperfine.err" >&2; exit 1; }
done

per_decision=
if [[ -z $quick ]]; then
    export RETRY_BENCH_DECISIONS=$decisions
    host=$(cargo test --release --quiet --lib state::throttle::tests::cost_of_one_host_decision \
        -- --exact --ignored --nocapture 2>/dev/null | grep '^host throttle:')
    fleet=$(RETRY_BENCH_STORE=$store cargo test --release --quiet --lib \
        state::throttle::fleet::tests::cost_of_one_decision_over_loopback \
        -- --exact --ignored --nocapture 2>/dev/null | grep '^fleet throttle:')
    per_decision="$host"$'\n'"$fleet"
fi
redis-cli -p "$port" ping 2>/dev/null | grep -q PONG || { echo "throttle: redis-server died" >&2; exit 1; }

python3 - "$work" "$attempts" "$runs" "$decisions" "$per_decision" "$quick" "$rounds" >"$work/table.md" <<'PY'
import json, re, statistics, sys
work, attempts, runs, decisions, per_decision, quick, rounds = sys.argv[1:8]
attempts, runs, rounds = int(attempts), int(runs), int(rounds)
# Each round's means; a store's cost is its round's mean less the
# baseline's of the same round, the median over rounds.
means = [[r["mean"] for r in json.load(open(f"{work}/runs-{n}.json"))["results"]]
         for n in range(1, rounds + 1)]
base = statistics.median(m[0] for m in means)
print(f"| store | a run of {attempts} attempts (median of {rounds} rounds' means of {runs}) "
      "| vs no throttle (in the same round) | added per attempt | target |")
print("|---|---:|---:|---:|---|")
print(f"| none (the baseline) | {base*1e3:.1f} ms | 1.00× | | |")
verdicts = []
for i, name, target in [(1, "host file", "≤ 200 µs"), (2, "Redis, loopback", "")]:
    run = statistics.median(m[i] for m in means)
    ratio = statistics.median(m[i] / m[0] for m in means)
    added = statistics.median((m[i] - m[0]) / attempts * 1e6 for m in means)
    print(f"| {name} | {run*1e3:.1f} ms | {ratio:.2f}× | {added:+.0f} µs | {target} |")
    if target:
        verdicts.append((f"host file, end to end: {added:+.0f} µs an attempt", added <= 200))
if per_decision:
    print()
    print(f"Each decision timed alone, {int(decisions):,} in a row (release unit tests):")
    print()
    print("| store | median | p99 | target |")
    print("|---|---:|---:|---|")
    host_line, fleet_line = per_decision.splitlines()
    fleet = list(map(float, re.findall(r"([\d.]+) us", fleet_line)))
    for numbers, name, target, limit, which in [
        (list(map(float, re.findall(r"([\d.]+) us", host_line))), "host file", "≤ 200 µs", 200, "median"),
        (fleet[:2], "Redis, loopback", "p99 ≤ 1 ms", 1000, "p99"),
        (fleet[2:], "Redis, loopback: a script that does nothing (the baseline)", "", None, None),
    ]:
        median, p99 = numbers
        print(f"| {name} | {median:.1f} µs | {p99:.1f} µs | {target} |")
        if limit is None:
            continue
        value = median if which == "median" else p99
        verdicts.append((f"{name}, per decision: {which} {value:.1f} µs", value <= limit))
if verdicts and not quick:
    print()
    print("Verdict: " + "; ".join(f"{what} ({'within' if ok else 'OVER'})" for what, ok in verdicts) + ".")
    open(f"{work}/verdict", "w").write("ok" if all(ok for _, ok in verdicts) else "over")
PY

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), Linux $(uname -r), $(redis-server --version | cut -d' ' -f3), $(date -u +%Y-%m-%d)"
load=$(cut -d' ' -f1-3 /proc/loadavg)
section() {
    echo "## The adaptive throttle's cost (bench/throttle.sh)"
    echo
    echo "Produced by \`bash bench/throttle.sh\` on: $machine; load average at the end $load. The retry measured: \`$(basename "$retry")\`; \`--throttle-k 1e9\` after one success, so nothing is rejected and every attempt asks."
    echo
    cat "$work/table.md"
}
if [[ $out == - ]]; then
    section
else
    # shellcheck source=bench/results.sh
    . bench/results.sh
    section | replace_section "$out" "## The adaptive throttle's cost"
    section
    echo "throttle: results in $out" >&2
fi
if [[ -f $work/verdict && $(cat "$work/verdict") != ok ]]; then
    echo "throttle: over a target" >&2
    exit 1
fi
