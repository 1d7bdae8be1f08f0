#!/usr/bin/env bash
# Fuzz every target in fuzz/ for a bounded time; fail if any input crashes,
# hangs (10 s) or takes more than 2 GB:
#
#   bash bench/fuzz.sh [SECONDS_PER_TARGET]     # default 60; ~2 min to build first
#
# Needs the nightly toolchain and cargo-fuzz (installed from crates.io when
# missing). Corpora grow in fuzz/corpus/ (ignored by git), starting from the
# committed fuzz/seeds/. A crash leaves its input in fuzz/artifacts/TARGET/;
# the other targets still run, then the script exits 1 naming the failures.
# Turn a crash into a regression test in the parser's own unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
case $seconds in
    '' | *[!0-9]*) echo "usage: bash bench/fuzz.sh [SECONDS_PER_TARGET]" >&2; exit 2 ;;
esac

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --locked cargo-fuzz

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

failed=()
cd fuzz
for target in $(cargo +nightly fuzz list); do
    mkdir -p "corpus/$target"
    options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
    [ "$target" = argv ] && options+=(-dict="$dict")
    echo "fuzz: $target for ${seconds}s" >&2
    started=$SECONDS
    if cargo +nightly fuzz run "$target" "corpus/$target" "seeds/$target" -- "${options[@]}"; then
        echo "fuzz: $target: no crash in $((SECONDS - started))s" >&2
    else
        echo "fuzz: $target: FAILED after $((SECONDS - started))s (see fuzz/artifacts/$target/)" >&2
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: crashes in: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: every target ran ${seconds}s without a crash" >&2
