#!/usr/bin/env python3
"""The import picture of src/ (ARCHITECTURE.md's rule: imports point one way).

Prints, for production code (each file's `#[cfg(test)] mod tests` left out):
which area imports which (counting `crate::` paths), every pair of files
outside one folder's mod.rs that import each other, every pair of folders
that import each other (a file anywhere under one naming the other), the
files outside `cli/` that name clap, and the files outside `platform/` that
make OS calls (`libc::`, `std::process::Command`, `std::os::`). Exits 1 if
any two files or folders import each other (.ci/run runs it).

    python3 scripts/imports.py [src]
"""
import collections
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "src"
TESTS = re.compile(r"#\[cfg\(test\)\]\s*mod tests\s*\{[\s\S]*")
files = {}
for folder, _, names in os.walk(root):
    for name in names:
        if name.endswith(".rs"):
            path = os.path.join(folder, name)
            module = os.path.relpath(path, root)[:-3].replace(os.sep, "::")
            module = re.sub(r"(::)?mod$", "", module)
            with open(path, encoding="utf-8") as source:
                text = source.read()
            # A test module in a file of its own (`#[cfg(test)] mod tests;`).
            if module == "tests" or module.endswith("::tests"):
                text = ""
            files[module] = TESTS.sub("", text)


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


# Folders: for an import between two modules neither of which holds the
# other, the two units where their paths part (`trace` and `run` for
# `trace::spans` naming `run::events`); a unit that is a folder makes it a
# folder pair. Two folders naming each other are one layer, not two.
folders = {m.rsplit("::", 1)[0] for m in files if "::" in m}
units = set()
for source, target in edges:
    a, b = source.split("::") if source else [], target.split("::")
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), None)
    if i is None:
        continue
    units.add(("::".join(a[: i + 1]), "::".join(b[: i + 1])))
folder_circles = sorted(
    {tuple(sorted(pair)) for pair in units if pair[::-1] in units
     and (pair[0] in folders or pair[1] in folders)}
)
print(f"folders importing each other: {len(folder_circles)}")
for a, b in folder_circles:
    print(f"  {a}{'/' * (a in folders)} <-> {b}{'/' * (b in folders)}")


def outside(pattern, home):
    return sorted(m for m, text in files.items() if area(m) != home and re.search(pattern, text))


print("clap outside cli/:", outside(r"\bclap::|use clap", "cli"))
print("OS calls outside platform/:", outside(r"\blibc::|process::Command|std::os::", "platform"))
sys.exit(1 if circles or folder_circles else 0)
