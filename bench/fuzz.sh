#!/usr/bin/env bash
# Fuzz every target in fuzz/ for a bounded time; fail if any input crashes,
# hangs (10 s), leaks, or the target outgrows the memory limit:
#
#   bash bench/fuzz.sh [SECONDS_PER_TARGET]     # default 60; ~3 min to set up first
#
# Corpora grow in fuzz/corpus/ (ignored by git), starting from the
# committed fuzz/seeds/, which are read, never written. A crash leaves its
# input in fuzz/artifacts/TARGET/ and libFuzzer's output in fuzz/logs/
# (both ignored by git too); the other targets still run, then the
# script exits 1 naming the failures. Turn a crash into a regression test
# in the parser's own unit tests. From the environment:
#   FUZZ_OUT=DIR    corpora, crash inputs and logs under DIR instead of fuzz/
#                   (.ci/run: a fresh directory, so each run starts from the seeds)
#   FUZZ_RSS_MB=N   the memory limit per target, in MB (default 2048)
#   FUZZ_JOBS=N     targets fuzzed at once (default: the number of cores)
#
# Nightly (installed when missing) builds the targets with AddressSanitizer,
# whose LeakSanitizer fails the first input that leaks; its quarantine of
# freed memory is cut to 16 MB (from 256), so the memory limit measures the
# target's own memory: 91 MB at most in 30 s, 46 MB without sanitizers.
# Where nightly cannot be installed, the default toolchain builds the
# targets without sanitizers: only the memory limit catches a leak then.
# cargo-fuzz, pinned, is installed from crates.io when missing, into a
# cache of the user's, outside the clone (~/.cache/retry/cargo-fuzz-VERSION),
# so a fresh clone does not build it again (45 s).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
case $seconds in
    '' | *[!0-9]*) echo "usage: bash bench/fuzz.sh [SECONDS_PER_TARGET]" >&2; exit 2 ;;
esac
rss_mb=${FUZZ_RSS_MB:-2048}
mkdir -p "${FUZZ_OUT:-fuzz}"
out=$(cd "${FUZZ_OUT:-fuzz}" && pwd)

if grep -q '^nightly' <<<"$(rustup toolchain list)" || rustup toolchain install nightly --profile minimal --no-self-update; then
    cargo_fuzz=(cargo +nightly fuzz)
    build=()
else
    echo "fuzz: no nightly toolchain: fuzzing without sanitizers (a leak shows only at ${rss_mb} MB)" >&2
    cargo_fuzz=(cargo fuzz)
    build=(--sanitizer none)
fi
cargo_fuzz_version=0.13.2
tools=${XDG_CACHE_HOME:-$HOME/.cache}/retry/cargo-fuzz-$cargo_fuzz_version
if [ "$("$tools/bin/cargo-fuzz" --version 2>/dev/null)" != "cargo-fuzz $cargo_fuzz_version" ]; then
    echo "fuzz: installing cargo-fuzz $cargo_fuzz_version into $tools" >&2
    cargo install --locked --quiet --version "$cargo_fuzz_version" --root "$tools" cargo-fuzz
fi
export PATH="$tools/bin:$PATH"
export ASAN_OPTIONS="quarantine_size_mb=16${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# The argv target's dictionary: every long option of the current build, as a
# word and as a NUL-separated argument, and a few values.
cargo build --quiet
mkdir -p fuzz/target
dict="$PWD/fuzz/target/argv.dict"
{
    target/debug/retry --help | grep -o -- '--[a-z][a-z-]*' | sort -u |
        while read -r flag; do printf '"%s"\n"\\x00%s\\x00"\n' "$flag" "$flag"; done
    printf '"%s"\n' unlimited all decorrelated ms s y 1-100000 300000000000y
} >"$dict"

cd fuzz
# Built before the clock starts: the first target's time is for fuzzing.
"${cargo_fuzz[@]}" build "${build[@]}"

# One target for `seconds`; its verdict goes to $out/logs/TARGET.status.
fuzz_one() {
    local target=$1 log="$out/logs/$1.log" started=$SECONDS
    mkdir -p "$out/corpus/$target" "$out/artifacts/$target"
    local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb="$rss_mb" -print_final_stats=1
        -artifact_prefix="$out/artifacts/$target/")
    [ "$target" = argv ] && options+=(-dict="$dict")
    echo "fuzz: $target for ${seconds}s (log: $log)" >&2
    if "${cargo_fuzz[@]}" run "${build[@]}" "$target" "$out/corpus/$target" "seeds/$target" -- \
        "${options[@]}" >"$log" 2>&1; then
        stats=$(grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$log" | tr -s ' \t' ' ' | tr '\n' ' ')
        echo "fuzz: $target: no crash in $((SECONDS - started))s (${stats% })" >&2
        echo ok >"$out/logs/$target.status"
    else
        {
            tail -n 40 "$log"
            echo "fuzz: $target: FAILED after $((SECONDS - started))s (input in $out/artifacts/$target/, log: $log)"
        } >&2
        echo failed >"$out/logs/$target.status"
    fi
}

# libFuzzer runs a target on one core: as many targets at once as there
# are cores (FUZZ_JOBS), so 4 targets take 2 rounds on 2 cores, not 4.
mkdir -p "$out/logs"
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT # an interrupted run leaves no fuzzer
targets=$("${cargo_fuzz[@]}" list)
for target in $targets; do
    rm -f "$out/logs/$target.status"
    while [ "$(jobs -rp | wc -l)" -ge "${FUZZ_JOBS:-$(nproc)}" ]; do wait -n || true; done
    fuzz_one "$target" &
done
wait

failed=()
for target in $targets; do
    [ "$(cat "$out/logs/$target.status" 2>/dev/null)" = ok ] || failed+=("$target")
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: crashes in: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: every target ran ${seconds}s without a crash" >&2
