#!/usr/bin/env bash
# A fleet during an outage: 10 "hosts" (each its own XDG_RUNTIME_DIR, so its
# own host budget) of 20 cron-like jobs each, every job running
# `retry -n 5 --base 200ms --cap 2s` on a probe of a dead loopback service
# (a port of 127.0.0.1 nobody listens on), then 2 s of sleep, again and
# again, for DURATION seconds (default 30). Three variants: no budget, host
# budgets (`--budget fleet`, the defaults: 500 tokens, 14 a retry, 5/s), and
# one fleet budget of the same size in a redis-server started here
# (`--budget-store redis://127.0.0.1:PORT`). Prints the attempts each made,
# and how many of them were retries (the jobs' first attempts are never
# refused, so they set the floor), then what one budget decision costs over loopback (a release unit test:
# 20,000 script calls in a row, each timed: median and p99).
#
#   bash bench/fleet-budget.sh              # ~2 minutes, 3 x 30 s of it the fleet
#   DURATION=5 bash bench/fleet-budget.sh   # a quick look
#
# Everything it starts (the jobs, in process groups of their own, and
# redis-server) is killed and its directory removed on every exit path
# (bench/lib/live.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-30}
cargo build --release --quiet --bin retry
RETRY="$PWD/target/release/retry"
# shellcheck source=bench/lib/live.sh
. bench/lib/live.sh
live_redis_tcp bench --maxclients 1000
work=$tmp
# A free port of 127.0.0.1 beside the store's: the dead service's.
dead=$(live_free_port)

echo "## A fleet in an outage: 10 hosts x 20 jobs, ${DURATION} s, a dead loopback service"
echo
python3 - "$RETRY" "$work" "$dead" "$store" "$DURATION" <<'PY'
import os, signal, subprocess, sys, time
retry, work, dead, store, duration = sys.argv[1:6]
duration = float(duration)
HOSTS, JOBS = 10, 20
variants = [
    ("no budget", []),
    ("host budgets (`--budget fleet`, 500 tokens, 14 a retry, 5/s each)", ["--budget", "fleet"]),
    ("one fleet budget (`--budget-store redis://…`, 500 tokens, 14 a retry, 5/s)",
     ["--budget", "fleet", "--budget-store", store]),
]
print("| variant | attempts | of which retries | retries per host a minute | retries refused | runs that went without the budget |")
print("|---|---:|---:|---:|---:|---:|")
for n, (name, extra) in enumerate(variants):
    log = os.path.join(work, f"attempts-{n}")
    refused = os.path.join(work, f"refused-{n}")
    open(log, "w").close()
    open(refused, "w").close()
    probe = f'echo $RETRY_ATTEMPT >> "{log}"; exec 3<>/dev/tcp/127.0.0.1/{dead}'
    args = " ".join(["-n 5 --base 200ms --cap 2s --log-format json", *extra])
    job = (f'while :; do "{retry}" {args} -- bash -c \'{probe}\' 2>&1 >/dev/null '
           f'| grep -o -e \'"reason":"budget"\' -e \'running without the budget\' '
           f'>> "{refused}"; sleep 2; done')
    jobs = []
    try:
        for h in range(HOSTS):
            host = os.path.join(work, f"v{n}-host{h}")
            os.makedirs(host, mode=0o700)
            env = dict(os.environ, XDG_RUNTIME_DIR=host)
            for _ in range(JOBS):
                jobs.append(subprocess.Popen(["bash", "-c", job], env=env,
                                             start_new_session=True,
                                             stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL))
        time.sleep(duration)
    finally:
        for p in jobs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in jobs:
            p.wait()
    with open(log) as f:
        numbers = [line.strip() for line in f]
    attempts = len(numbers)
    retries = sum(1 for n in numbers if n != "1")
    with open(refused) as f:
        events = [line.strip() for line in f]
    refusals = events.count('"reason":"budget"')
    failed_open = events.count("running without the budget")
    per_host_minute = retries / HOSTS * 60 / duration
    print(f"| {name} | {attempts} | {retries} | {per_host_minute:.0f} | {refusals} | {failed_open} |")
PY

redis-cli -p "$port" ping 2>/dev/null | grep -q PONG || { echo "bench: redis-server died:" >&2; cat "$work/redis.log" >&2; exit 1; }
echo
echo "## The cost of a fleet budget decision over loopback"
echo
RETRY_BENCH_STORE="$store" cargo test --release --quiet --lib cost_of_one_decision_over_loopback \
    -- --ignored --nocapture 2>/dev/null | grep -o 'fleet budget:.*'
