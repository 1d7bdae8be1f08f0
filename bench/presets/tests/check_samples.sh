#!/usr/bin/env bash
# Checks every line of samples.tsv against its preset's output rules, with
# retry's own regex engine: runs retry on a command that prints the line.
#   retry-if-output matched: a command exiting 0 is retried (-n 2: exit 1), else exit 0
#   stop-if-output matched:  a command exiting 11/12 (attempt 1/2) stops at 11, else 12
#   throttle-if-output matched: a command exiting 75 is a throttled retry
#                            (its retry line says `throttled (`), else a transient one
# usage: check_samples.sh [RETRY_BINARY]
set -u
here=$(cd "$(dirname "$0")" && pwd)
retry=${1:-$(cd "$(dirname "$0")/../../.." && pwd)/target/debug/retry}
# shellcheck source=bench/presets/tests/preset_flags.sh
. "$here/preset_flags.sh"
pass=0 fail=0
while IFS=$'\t' read -r preset expect line; do
  case $preset in ''|'#'*) continue ;; esac
  preset_flags "$retry" "$preset" || { echo "check_samples.sh: no preset $preset" >&2; exit 2; }
  ri=$(preset_rule retry-if-output)
  si=$(preset_rule stop-if-output)
  ti=$(preset_rule throttle-if-output)
  r=no s=no t=no
  if [ -n "$ri" ]; then
    "$retry" -q -n 2 --base 1ms --retry-if-output "$ri" -- sh -c 'printf "%s\n" "$1"' _ "$line" >/dev/null 2>&1
    [ $? -eq 1 ] && r=yes
  fi
  if [ -n "$si" ]; then
    "$retry" -q -n 2 --base 1ms --stop-if-output "$si" -- sh -c 'printf "%s\n" "$1" >&2; exit $((10 + RETRY_ATTEMPT))' _ "$line" >/dev/null 2>&1
    [ $? -eq 11 ] && s=yes
  fi
  if [ -n "$ti" ]; then
    "$retry" -n 2 --base 1ms --throttle-if-output "$ti" -- sh -c 'printf "%s\n" "$1"; exit 75' _ "$line" 2>&1 >/dev/null | grep -q 'throttled (' && t=yes
  fi
  if [ $s = yes ]; then got=stop; elif [ $r = yes ]; then got=retry; else got=none; fi
  [ $t = yes ] && got=$got+throttled
  if [ "$got" = "$expect" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %-7s expected %-5s got %-5s (retry-if:%s stop-if:%s throttle-if:%s) %s\n' "$preset" "$expect" "$got" "$r" "$s" "$t" "$line"; fi
done < "$here/samples.tsv"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
