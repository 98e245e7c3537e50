#!/usr/bin/env python3
"""check-imports.py - each target imports exactly what Package.swift declares as its direct dependencies.

SwiftPM's `--explicit-target-dependency-import-check error` accepts any module in a target's
recursive closure, so a role could import a target it only reaches through another, and a
declared dependency nobody imports would stay in the graph. This script reads the targets and
their direct dependencies from `swift package dump-package` (for each package given, by default
this one and Fuzz/), reads every `import` in each target's Swift files, and fails on any
difference either way. The toolchain's own modules (Foundation, Glibc, Testing, ...) are not
dependencies and are ignored. A C target's headers (CMediaShim's, CGcrypt's) are not Swift
and are not read.

Usage: scripts/check-imports.py [PACKAGE_DIR ...]
"""

import json
import os
import re
import subprocess
import sys

# Modules of the toolchain, imported without being declared.
TOOLCHAIN = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Musl", "Darwin",
    "Dispatch", "Synchronization", "Testing", "XCTest", "_Concurrency", "Swift", "os",
    "CoreFoundation", "_StringProcessing", "RegexBuilder",
}

# `import X`, `@testable import X`, `@_spi(Testing) @testable import X`, `package import X`,
# `import struct X.Y`, `@preconcurrency import X`.
IMPORT = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
    r"(?:(?:struct|class|enum|protocol|typealias|func|let|var|actor)\s+)?([A-Za-z_][A-Za-z0-9_]*)",
    re.MULTILINE)


def dump(package_dir):
    out = subprocess.run(
        ["swift", "package", "--package-path", package_dir, "dump-package"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def dependency_names(target):
    names = set()
    for dep in target["dependencies"]:
        for kind in ("byName", "target", "product"):
            if kind in dep:
                names.add(dep[kind][0])
    return names


def default_path(target):
    base = "Tests" if target["type"] == "test" else "Sources"
    return os.path.join(base, target["name"])


def imports_of(directory):
    found = {}
    for root, _, files in os.walk(directory):
        for name in files:
            if not name.endswith(".swift"):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            # Comments are not imports ("/// ... import X" in a doc comment).
            text = re.sub(r"//[^\n]*", "", text)
            for module in IMPORT.findall(text):
                found.setdefault(module, path)
    return found


def check(package_dir):
    package = dump(package_dir)
    problems = []
    for target in package["targets"]:
        if target["type"] in ("system", "binary", "plugin", "macro"):
            continue
        directory = os.path.join(package_dir, target.get("path") or default_path(target))
        declared = dependency_names(target)
        imported = imports_of(directory)
        if not any(f.endswith(".swift") for _, _, fs in os.walk(directory) for f in fs):
            continue  # a C target
        own = {target["name"]}
        for module in sorted(set(imported) - declared - TOOLCHAIN - own):
            problems.append(
                f"{target['name']}: imports {module} ({imported[module]}) but does not declare it in "
                f"{package_dir}/Package.swift: declare it, or reach it through a target that is declared")
        for module in sorted(declared - set(imported)):
            problems.append(
                f"{target['name']}: declares {module} in {package_dir}/Package.swift but no file imports it: "
                f"take it out of the target's dependencies")
    return problems


def main():
    packages = sys.argv[1:] or ["."] + (["Fuzz"] if os.path.exists("Fuzz/Package.swift") else [])
    problems = [p for package_dir in packages for p in check(package_dir)]
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-imports: {len(problems)} difference(s) between imports and declared dependencies",
              file=sys.stderr)
        return 1
    print(f"check-imports: every target imports exactly its declared dependencies ({', '.join(packages)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
