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
# redis-server) is killed and its directory removed on every exit path.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v redis-server >/dev/null || { echo "bench: needs redis-server (apt-get install redis-server)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench: needs python3" >&2; exit 1; }

DURATION=${DURATION:-30}
cargo build --release --quiet --bin retry
RETRY="$PWD/target/release/retry"
work=$(mktemp -d)
redis_pid=
cleanup() {
    if [[ -n $redis_pid ]]; then
        kill -9 "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Two free ports of 127.0.0.1: the store's, and the dead service's.
read -r port dead < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --maxclients 1000 --daemonize no >"$work/redis.log" 2>&1 &
redis_pid=$!
up=
for _ in $(seq 100); do
    redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && { up=1; break; }
    sleep 0.05
done
[[ -n $up ]] || { echo "bench: redis-server did not start:" >&2; cat "$work/redis.log" >&2; exit 1; }
store="redis://127.0.0.1:$port"

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
    -- --ignored --nocapture 2>/dev/null | grep '^fleet budget:'
