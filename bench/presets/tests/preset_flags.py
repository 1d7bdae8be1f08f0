#!/usr/bin/env python3
"""Reads a presets file (src/preset/builtin.ini) as src/preset/mod.rs (in this repository) does, and prints
one preset's rules.

  preset_flags.py FILE NAME           the preset's flags, NUL-separated (--retry-on\\0VALUE\\0...)
  preset_flags.py FILE NAME KEY       one rule's value (empty if the preset has none)
  preset_flags.py FILE --check        parse every section; print `--presets`-like lines
"""
import sys

RULES = ["retry-on", "fatal-on", "success-on", "retry-if-output", "stop-if-output", "delay-from-output"]
SAYS = ["slow-down-if-output", "slow-down-if-output.advice"]

def parse(text):
    presets, keys = [], []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                sys.exit(f"line {number}: `{line}` is not a section header")
            name = line[1:-1].strip()
            if not name or not all(c.islower() or c.isdigit() or c == "-" for c in name):
                sys.exit(f"line {number}: preset name `{name}`")
            if any(p["name"] == name for p in presets):
                sys.exit(f"line {number}: preset `{name}` is defined twice")
            if presets and not presets[-1]["source"]:
                sys.exit(f"[{presets[-1]['name']}] has no source")
            presets.append({"name": name, "programs": [], "rules": [], "source": ""})
            keys = []
            continue
        if "=" not in line:
            sys.exit(f"line {number}: `{line}` is neither `key = value` nor `[name]`")
        key, value = (s.strip() for s in line.split("=", 1))
        if not presets:
            sys.exit(f"line {number}: `{key}` before the first `[name]`")
        if key in keys:
            sys.exit(f"line {number}: `{key}` is given twice")
        keys.append(key)
        if not value:
            sys.exit(f"line {number}: `{key}` has no value")
        p = presets[-1]
        if key == "programs":
            p["programs"] = value.split()
        elif key == "source":
            p["source"] = value
        elif key in RULES:
            p["rules"].append((key, value))
        elif (key.endswith(".label") and key[:-6] in RULES) or key in SAYS:
            pass  # words, not flags: a rule's label, the slow-down advice
        else:
            sys.exit(f"line {number}: unknown key `{key}`")
    if presets and not presets[-1]["source"]:
        sys.exit(f"[{presets[-1]['name']}] has no source")
    return presets

def main():
    presets = parse(open(sys.argv[1], encoding="utf-8").read())
    if sys.argv[2] == "--check":
        for p in presets:
            print(f"[{p['name']}] programs={' '.join(p['programs'])} rules={','.join(k for k, _ in p['rules'])}")
        return
    p = next((p for p in presets if p["name"] == sys.argv[2]), None)
    if p is None:
        sys.exit(f"no preset {sys.argv[2]}")
    if len(sys.argv) > 3:
        sys.stdout.write(dict(p["rules"]).get(sys.argv[3], ""))
        return
    out = []
    for k, v in p["rules"]:
        out += ["--" + k, v]
    sys.stdout.write("\0".join(out) + ("\0" if out else ""))

main()
