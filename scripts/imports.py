#!/usr/bin/env python3
"""The import picture of src/ (ARCHITECTURE.md's rule: imports point one way).

Prints, for production code (each file's `#[cfg(test)] mod tests` left out):
which area imports which (counting `crate::` paths), every pair of files
outside one folder's mod.rs that import each other, the files outside `cli/`
that name clap, and the files outside `platform/` that make OS calls
(`libc::`, `std::process::Command`, `std::os::`).

    python3 scripts/imports.py [src]
"""
import collections
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "src"
TESTS = re.compile(r"#\[cfg\(test\)\]\s*mod tests[\s\S]*")
files = {}
for folder, _, names in os.walk(root):
    for name in names:
        if name.endswith(".rs"):
            path = os.path.join(folder, name)
            module = os.path.relpath(path, root)[:-3].replace(os.sep, "::")
            module = re.sub(r"(::)?mod$", "", module)
            with open(path, encoding="utf-8") as source:
                files[module] = TESTS.sub("", source.read())


def area(module):
    return module.split("::")[0] if module else "lib"


areas = collections.Counter()
edges = set()
for module, text in files.items():
    for path in re.findall(r"crate::([a-z_]+(?:::[a-z_]+)*)", text):
        parts = path.split("::")
        prefixes = ("::".join(parts[:k]) for k in range(len(parts), 0, -1))
        target = next((p for p in prefixes if p in files), None)
        if target is None or target == module:
            continue
        if area(target) != area(module):
            areas[(area(module), area(target))] += 1
        edges.add((module, target))

print("areas (from -> to: crate:: paths):")
for (source, target), count in sorted(areas.items()):
    print(f"  {source:10} -> {target:10} {count}")
circles = sorted(
    {tuple(sorted(pair)) for pair in edges if pair[::-1] in edges
     and not (pair[0].startswith(pair[1]) or pair[1].startswith(pair[0]))}
)
print(f"files importing each other: {len(circles)}")
for a, b in circles:
    print(f"  {a} <-> {b}")


def outside(pattern, home):
    return sorted(m for m, text in files.items() if area(m) != home and re.search(pattern, text))


print("clap outside cli/:", outside(r"\bclap::|use clap", "cli"))
print("OS calls outside platform/:", outside(r"\blibc::|process::Command|std::os::", "platform"))
