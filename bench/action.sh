#!/usr/bin/env bash
# The Action's cached start (issue 50): scripts/action.sh when an earlier
# step of the job installed retry, against the script as it was before
# its cache checks (5d6fc30: the issue's 47.6 ms) and as issue 50 found it
# (3db010f: 205 ms, 16 programs), measured side by side in one run.
#
#   bash bench/action.sh              # target/release/retry (cargo build --release)
#   bash bench/action.sh BIN          # another build as the cached binary
#
# Each version is the script of its commit, taken with `git show` (the
# working tree's for "now"), run as the runner runs it: `bash action.sh`
# with INPUT_COMMAND=true, a tag ref (RETRY_ACTION_REF=v9.8.7), a mirror
# that is never asked (127.0.0.1:9) and a RUNNER_TEMP holding the install
# every version takes for its own: RUNNER_TEMP/retry-action/VERSION-TARGET/
# retry and its recorded checksum (retry.sha256 as 3db010f records it,
# retry.cksum as now), this user's, 700/755/755/644. Each
# round is one hyperfine run of every version in turn, so load that comes
# and goes falls on all of them alike; the medians are over every round,
# the ratios against the old script within the run. Beside them, the
# programs each started (execve) and the processes it created (fork and
# clone, threads too), counted by strace where it is installed.
#
# Environment: ACTION_ROUNDS (10), ACTION_RUNS (runs per round and
# version, 30); ACTION_RESULTS, the file whose section "The Action's
# cached start" is written (bench/RESULTS.md; replaced if present, the
# rest kept), or `-` for stdout only. Needs git (with the two commits),
# hyperfine and python3.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ACTION_ROUNDS:-10}
runs=${ACTION_RUNS:-30}
out=${ACTION_RESULTS:-bench/RESULTS.md}
bin=${1:-target/release/retry}
if [ $# -eq 0 ] && [ ! -x "$bin" ]; then
    cargo build --release --locked --quiet
fi
[ -x "$bin" ] || { echo "action: not an executable: $bin" >&2; exit 2; }
for tool in hyperfine python3 git; do
    command -v "$tool" >/dev/null || { echo "action: needs $tool" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The versions: NAME, then where its script comes from.
names=(before-checks issue-50 now)
git show 5d6fc30:scripts/action.sh >"$work/before-checks.sh"
git show 3db010f:scripts/action.sh >"$work/issue-50.sh"
cp scripts/action.sh "$work/now.sh"

# The install an earlier step left: the same for every version.
temp=$work/runner-temp
cache=$temp/retry-action/9.8.7-x86_64-unknown-linux-musl
mkdir -p "$cache"
chmod 700 "$temp" "$temp/retry-action"
chmod 755 "$cache"
cp "$bin" "$cache/retry"
chmod 755 "$cache/retry"
sha256sum "$cache/retry" | cut -d ' ' -f 1 >"$cache/retry.sha256"
cksum <"$cache/retry" >"$cache/retry.cksum"
chmod 644 "$cache/retry.sha256" "$cache/retry.cksum"

# Nothing of the caller's job: the old scripts would read its RETRY_*.
for name in ${!RETRY_@} ${!INPUT_@}; do unset "$name"; done
export RUNNER_OS=Linux RUNNER_ARCH=X64 RUNNER_TEMP=$temp RETRY_ACTION_REF=v9.8.7 \
    RETRY_INSTALL_FROM=http://127.0.0.1:9 INPUT_COMMAND=true \
    GITHUB_OUTPUT=$work/output GITHUB_PATH=$work/path GITHUB_STEP_SUMMARY=$work/summary
unset RUNNER_TOOL_CACHE GITHUB_ACTIONS
commands=()
for name in "${names[@]}"; do
    # Each must take the cached copy: nothing downloaded, nothing said.
    said=$(bash "$work/$name.sh" 2>&1) || { echo "action: $name failed: $said" >&2; exit 1; }
    [ -z "$said" ] || { echo "action: $name did not take the cached copy: $said" >&2; exit 1; }
    commands+=("bash $work/$name.sh")
done

# Programs and processes, per version.
: >"$work/counts.tsv"
for name in "${names[@]}"; do
    execs='' forks=''
    if command -v strace >/dev/null 2>&1 &&
        strace -f -qq -e trace=execve,fork,vfork,clone,clone3 -o "$work/strace" \
            bash "$work/$name.sh" >/dev/null 2>&1; then
        execs=$(grep -c 'execve(' "$work/strace" || true)
        forks=$(grep -cE '(clone3?|v?fork)\(' "$work/strace" || true)
    fi
    printf '%s\t%s\t%s\n' "$name" "$execs" "$forks" >>"$work/counts.tsv"
done

load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
for round in $(seq "$rounds"); do
    echo "action: round $round of $rounds" >&2
    hyperfine -N --warmup 3 --runs "$runs" --export-json "$work/round.$round.json" \
        "${commands[@]}" >/dev/null 2>&1
done

python3 - "$work" "$rounds" "${names[@]}" >"$work/table.md" <<'PY'
import json, statistics, sys
work, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
parts = [json.load(open(f"{work}/round.{r}.json"))["results"] for r in range(1, rounds + 1)]
times = [[t for part in parts for t in part[i]["times"]] for i in range(len(names))]
median = [statistics.median(t) for t in times]
# Each round's own ratio, so that a round's load cancels out.
ratios = [[part[i]["median"] / part[0]["median"] for part in parts] for i in range(len(names))]
counts = {}
for line in open(f"{work}/counts.tsv"):
    name, execs, forks = line.rstrip("\n").split("\t")
    counts[name] = (execs, forks)
words = {
    "before-checks": "`5d6fc30`, before the cache checks (the issue's 47.6 ms)",
    "issue-50": "`3db010f`, as issue 50 found it (the issue's 205 ms)",
    "now": "now (this tree's `scripts/action.sh`)",
}
# CPU time (user and system, the script's and every child's), which other
# work on the machine moves less than the wall clock; a wall time below it
# is work done on two cores at once.
cpu = [statistics.median(part[i]["user"] + part[i]["system"] for part in parts) for i in range(len(names))]
print("| script | median | vs before the checks (median of the rounds' ratios) | CPU time (user + system) | CPU vs before the checks | programs started (execve) | processes (fork, clone) |")
print("|---|---|---|---|---|---|---|")
for i, name in enumerate(names):
    execs, forks = counts.get(name, ("", ""))
    print(f"| {words[name]} | {median[i] * 1e3:.1f} ms | {statistics.median(ratios[i]):.2f}× | "
          f"{cpu[i] * 1e3:.1f} ms | {cpu[i] / cpu[0]:.2f}× | {execs} | {forks} |")
# The issue's bound: 60 ms where the old script took 47.6 ms.
print()
print(f"Issue 50's bound, 60 ms where the script before the checks took 47.6 ms, is {60 / 47.6:.2f}× that script: "
      f"{'met' if statistics.median(ratios[-1]) <= 60 / 47.6 else 'missed'} "
      f"({statistics.median(ratios[-1]):.2f}×; {median[0] * 60 / 47.6 * 1e3:.1f} ms on this machine).")
PY

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//'), $(uname -s) $(uname -r), $(date -u +%Y-%m-%d)"
section() {
    echo "## The Action's cached start (bench/action.sh)"
    echo
    echo "Produced by \`bash bench/action.sh\` on: $machine; load average at the start $load."
    echo "The job's second use of the Action (\`command: true\`, a tag ref, retry cached in RUNNER_TEMP by an earlier step), each script from its commit: $rounds rounds, each one hyperfine run of every version ($runs runs each); medians over all rounds, ratios within each round."
    echo
    cat "$work/table.md"
}
if [ "$out" = - ]; then
    section
    exit 0
fi
# shellcheck source=bench/results.sh
. bench/results.sh
section | replace_section "$out" "## The Action's cached start"
section
echo "action: results in $out" >&2
