# shellcheck shell=bash
# Sourced by the benches that start processes or a redis-server
# (bench/contention, bench/outage-live, bench/throttle-live,
# bench/throttle.sh, bench/fleet-budget.sh): what they share around them.
#
#   live_redis NAME          a redis-server on a unix socket only, in a
#                            temporary directory: $tmp, $tmp/redis.sock
#   live_redis_tcp NAME [ARGS...]
#                            a redis-server on a free port of 127.0.0.1
#                            (ARGS: more of its options), its files in a
#                            temporary directory: $tmp, $port, $store
#   live_free_port           prints a free port of 127.0.0.1
#   live_driver ARGS...      the driver in a process group of its own,
#                            waited for
#   live_machine FILE        FILE anew, its first line the machine and
#                            the load average at the end
#
# Every exit path of the sourcing script (Ctrl-C included) ends the
# driver's group, stops redis and removes $tmp.
tmp= redis= driver=
live_cleanup() {
    [ -n "$driver" ] && kill -TERM -- "-$driver" 2>/dev/null || true
    [ -n "$redis" ] && kill "$redis" 2>/dev/null && wait "$redis" 2>/dev/null || true
    [ -n "$tmp" ] && rm -rf "$tmp"
    return 0
}
trap live_cleanup EXIT
trap 'exit 130' INT TERM

live_redis() {
    local name=$1
    command -v redis-server >/dev/null || { echo "$name: redis-server is missing (apt-get install redis-server)" >&2; exit 1; }
    tmp=$(mktemp -d)
    redis-server --port 0 --unixsocket "$tmp/redis.sock" --unixsocketperm 700 \
        --save '' --appendonly no --dir "$tmp" --logfile "$tmp/redis.log" &
    redis=$!
    for _ in $(seq 100); do [ -S "$tmp/redis.sock" ] && break; sleep 0.05; done
    [ -S "$tmp/redis.sock" ] || { echo "$name: redis-server did not start" >&2; exit 1; }
}

live_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

live_redis_tcp() {
    local name=$1 up=
    shift
    for tool in redis-server redis-cli python3; do
        command -v "$tool" >/dev/null || { echo "$name: needs $tool (apt-get install redis-server python3)" >&2; exit 1; }
    done
    tmp=$(mktemp -d)
    port=$(live_free_port)
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$tmp" --daemonize no "$@" >"$tmp/redis.log" 2>&1 &
    redis=$!
    for _ in $(seq 100); do
        redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && { up=1; break; }
        sleep 0.05
    done
    [ -n "$up" ] || { echo "$name: redis-server did not start:" >&2; cat "$tmp/redis.log" >&2; exit 1; }
    store="redis://127.0.0.1:$port"
}

live_driver() {
    set -m # the driver gets a process group of its own
    "$@" &
    driver=$!
    wait "$driver"
    driver=
    set +m
}

live_machine() {
    local file=$1 machine load
    machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr), $(date -u +%F)"
    load="load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    {
        echo "Machine: $machine; $load."
        echo
        cat "$file"
    } >"$file.new"
    mv "$file.new" "$file"
}
