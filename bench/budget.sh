#!/usr/bin/env bash
# What a shared retry budget buys during an outage, and what it costs.
#
#   bash bench/budget.sh          # ~1-2 minutes (release builds included)
#
# 1. The outage: 50 `retry -- false` at once (default backoff: -n 5, full
#    jitter, base 1s, cap 20s), without a budget, with the default one, and
#    with a small one. Prints the attempts in all and how long the processes
#    took to give up (median, slowest).
# 2. The cost: what --budget adds to each retry decision (a release unit
#    test: 200,000 updates of one budget file in a row: lock, read, check,
#    write, unlock), and once a run (hyperfine: `retry -- true` with and
#    without a budget: the directory and file checks and a deposit). An
#    end-to-end timing of thousands of retries is no use here: the spawn of
#    each attempt varies by more than the budget costs.
#
# The budgets live in a temporary XDG_RUNTIME_DIR, removed on every exit
# path; the python driver kills the processes it started if it fails.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v hyperfine >/dev/null || { echo "bench: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench: needs python3" >&2; exit 1; }

cargo build --release --quiet
RETRY="$PWD/target/release/retry"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_RUNTIME_DIR="$work"
FALSE=$(type -P false)
TRUE=$(type -P true)

echo "## The outage: 50 processes, -n 5, default backoff, a command that always fails"
echo
python3 - "$RETRY" "$FALSE" <<'PY'
import json, statistics, subprocess, sys, time
retry, false = sys.argv[1:3]
variants = [
    ("no budget", []),
    ("--budget (500 tokens, 14 a retry, 5/s)", ["--budget", "outage-default"]),
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
        # Each one's end as it comes (its few log lines fit in the pipe).
        ended = {}
        deadline = time.monotonic() + 120
        while len(ended) < len(procs) and time.monotonic() < deadline:
            for i, (p, began) in enumerate(procs):
                if i not in ended and p.poll() is not None:
                    ended[i] = time.monotonic() - began
            time.sleep(0.005)
        attempts, refused = 0, 0
        for p, _ in procs:
            _, err = p.communicate(timeout=10)
            last = json.loads(err.strip().splitlines()[-1])
            attempts += last["attempt"]
            refused += last["reason"] == "budget"
        took = list(ended.values())
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
cargo test --release --quiet --lib state::budget::tests::cost_of_one_decision -- --exact --ignored --nocapture 2>/dev/null | grep '^budget:'
# Once a run: the directory and file checks, and a first-try success's deposit.
hyperfine -N --warmup 20 --runs 300 --export-json "$work/open.json" \
    "$RETRY -- $TRUE" "$RETRY --budget open -- $TRUE" >/dev/null 2>&1
python3 - "$work/open.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1]))["results"]
print(f"once a run: retry -- true {a['median']*1e6:.0f} us, with --budget {b['median']*1e6:.0f} us "
      f"(median of 300): {(b['median'] - a['median'])*1e6:+.0f} us")
PY
