#!/usr/bin/env bash
# What a shared retry budget buys during an outage, and what it costs.
#
#   bash bench/budget.sh          # ~1-2 minutes (release builds included)
#
# 1. The outage: 50 `retry -- false` at once (default backoff: -n 5, full
#    jitter, base 1s, cap 20s), without a budget, with the default one, and
#    with a small one. Prints the attempts in all and how long the processes
#    took to give up (median, slowest).
# 2. The cost: what --budget adds to each retry decision, end to end
#    (hyperfine: 2000 retries of `false` with and without a budget) and the
#    update alone (a release unit test, 200,000 updates in a row).
#
# The budgets live in a temporary XDG_RUNTIME_DIR, removed on every exit
# path; the python driver kills the processes it started if it fails.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v hyperfine >/dev/null || { echo "bench: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench: needs python3" >&2; exit 1; }

cargo build --release --quiet
RETRY="$PWD/target/x86_64-unknown-linux-gnu/release/retry"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_RUNTIME_DIR="$work"
FALSE=$(type -P false)

echo "## The outage: 50 processes, -n 5, default backoff, a command that always fails"
echo
python3 - "$RETRY" "$FALSE" <<'PY'
import json, statistics, subprocess, sys, time
retry, false = sys.argv[1:3]
variants = [
    ("no budget", []),
    ("--budget (500 tokens, 5 a retry, 5/s)", ["--budget", "outage-default"]),
    ("--budget --budget-tokens 100", ["--budget", "outage-small", "--budget-tokens", "100"]),
]
print("| variant | attempts | retries | gave up: budget | time to give up: median | slowest |")
print("|---|---:|---:|---:|---:|---:|")
for name, extra in variants:
    procs = []
    try:
        for _ in range(50):
            p = subprocess.Popen([retry, "--log-format", "json", *extra, "--", false],
                                 stderr=subprocess.PIPE, text=True)
            procs.append((p, time.monotonic()))
        attempts, refused, took = 0, 0, []
        for p, began in procs:
            _, err = p.communicate(timeout=120)
            took.append(time.monotonic() - began)
            last = json.loads(err.strip().splitlines()[-1])
            attempts += last["attempt"]
            refused += last["reason"] == "budget"
    finally:
        for p, _ in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    print(f"| {name} | {attempts} | {attempts - 50} | {refused} | "
          f"{statistics.median(took):.1f} s | {max(took):.1f} s |")
PY

echo
echo "## The cost of --budget per retry decision"
echo
hyperfine -N --warmup 2 --runs 10 --export-json "$work/cost.json" \
    "$RETRY -q -n 2001 --base 0ms -- $FALSE" \
    "$RETRY -q -n 2001 --base 0ms --budget cost --budget-tokens 4000000000 --budget-refill 0 -- $FALSE" \
    >/dev/null
python3 - "$work/cost.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1]))["results"]
diff = (b["mean"] - a["mean"]) / 2000 * 1e6
noise = (a["stddev"] + b["stddev"]) / 2000 * 1e6
print(f"end to end: {a['mean']*1e3:.0f} ms without, {b['mean']*1e3:.0f} ms with a budget for 2000 retries: "
      f"{diff:+.1f} us per retry (+- {noise:.1f} us of run-to-run noise)")
PY
cargo test --release --quiet --lib cost_of_one_decision -- --ignored --nocapture 2>/dev/null | grep '^budget:'
