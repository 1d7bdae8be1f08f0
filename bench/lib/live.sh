# shellcheck shell=bash
# Sourced by the live benches (bench/contention, bench/outage-live,
# bench/throttle-live): what they share around their driver.
#
#   live_redis NAME          a redis-server on a unix socket only, in a
#                            temporary directory: $tmp, $tmp/redis.sock
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
