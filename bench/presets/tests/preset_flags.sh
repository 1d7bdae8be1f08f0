# Sourced by verify.sh and check_samples.sh: a preset's flags as retry
# itself prints them (`retry --presets NAME`: two comment lines, then
# `retry FLAGS -- PROGRAM`, each value quoted for a POSIX shell), so the
# preset format has one parser, retry's. A built-in name is always the
# built-in preset; a preset of another name comes from the user's presets
# file ($XDG_CONFIG_HOME/retry/presets.ini).
#
#   preset_flags RETRY NAME   sets the array `flags` to the preset's flags
#   preset_rule KEY           prints the value of `--KEY` in `flags`, if any

preset_flags() {
  local line
  line=$("$1" --presets "$2" | grep '^retry ') || return 1
  # retry's own quoting, read back by the shell it was written for.
  eval "flags=(${line#retry })"
  # Without the trailing `-- PROGRAM`.
  flags=("${flags[@]:0:${#flags[@]}-2}")
}

preset_rule() {
  local i
  for ((i = 0; i + 1 < ${#flags[@]}; i += 2)); do
    if [ "${flags[i]}" = "--$1" ]; then
      printf '%s' "${flags[i + 1]}"
      return
    fi
  done
}
