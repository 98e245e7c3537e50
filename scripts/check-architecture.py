#!/usr/bin/env python3
"""check-architecture.py - docs/architecture.md's claims checked against the code.

The document keeps its checkable claims in fenced blocks, so that they are read here and
cannot drift from Package.swift and Sources/ without CI failing:

- ```layers```: every non-test target of Package.swift in exactly one layer, bottom first. A
  target depends only on targets of lower layers or listed before it in its own layer; in the
  layer named `roles`, on no other target of its layer (the roles stand side by side).
- The C libraries: each is used by the one Swift target the document names as its owner.
- Nothing in the first four layers uses SwiftNIO or Hummingbird; of them, only the vault and the
  relay's store use GRDB.
- ```send-path-sender``` and ```send-path-receiver```: `Type Target Sources/file.swift` per
  line, each type declared in that file of that target, 12 at most on a side, none twice.
- The send goes in one direction: the `Outbox` (which lists transfers) takes no closure from its
  caller (no function or initialiser of `Outbox.swift` has a parameter of function type), so it
  never runs a role's work and calls back into it.
- The "Targets" table names every layered target and nothing else.

Usage: scripts/check-architecture.py
"""

import json
import os
import re
import subprocess
import sys

DOC = "docs/architecture.md"
# The owner of each C library (a system library or a C target), as the document says.
C_OWNERS = {
    "CSodium": "LocafotoCrypto", "COpenSSL": "LocafotoCrypto", "CGcrypt": "LocafotoCrypto",
    "CAvahi": "LocafotoDiscovery", "CDBus": "LocafotoDesktop", "CExif": "LocafotoMedia",
    "CMediaShim": "LocafotoMedia", "CVips": "CMediaShim",
}
NETWORKING = {"NIOCore", "NIOPosix", "NIOSSL", "NIOHTTP1", "NIOHTTPTypes", "Hummingbird", "HummingbirdCore"}
SQLITE_USERS = {"LocafotoVault", "LocafotoRelay"}
MAX_TYPES_PER_SIDE = 12
OUTBOX = "Sources/LocafotoTransfers/Outbox.swift"


def closures_taken(path):
    """The functions and initialisers of `path` with a parameter of function type."""
    text = open(path, encoding="utf-8").read()
    found = []
    for m in re.finditer(r"\b(func\s+\w+|init)\s*(?:<[^>]*>)?\s*\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        params = text[m.end():i - 1]
        if "->" in params or "@escaping" in params:
            found.append(f"{path}: {m.group(1)} takes a closure from its caller; the outbox lists transfers and runs "
                         "no one's work (a role runs its own in its WorkQueue)")
    return found


def block(doc, info):
    m = re.search(r"^```" + re.escape(info) + r"\n(.*?)^```", doc, re.S | re.M)
    if not m:
        raise SystemExit(f"check-architecture: {DOC} has no ```{info}``` block")
    return [line for line in m.group(1).split("\n") if line.strip()]


def main():
    doc = open(DOC, encoding="utf-8").read()
    package = json.loads(subprocess.run(
        ["swift", "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
    targets = {t["name"]: t for t in package["targets"]}
    deps, products = {}, {}
    for name, t in targets.items():
        deps[name], products[name] = set(), set()
        for d in t["dependencies"]:
            if "product" in d:
                products[name].add(d["product"][0])
            for kind in ("byName", "target"):
                if kind in d:
                    deps[name].add(d[kind][0])
    errors = []

    layers, position = [], {}
    for i, line in enumerate(block(doc, "layers")):
        layer, names = line.split(":", 1)
        layers.append(layer.strip())
        for j, name in enumerate(names.split()):
            if name in position:
                errors.append(f"{name} is in two layers")
            position[name] = (i, j)
    production = {n for n, t in targets.items() if t["type"] != "test" and not t.get("path", "").startswith("Tests/")}
    for name in sorted(production - set(position)):
        errors.append(f"{name} is in Package.swift but in no layer of {DOC}")
    for name in sorted(set(position) - set(targets)):
        errors.append(f"{name} is in a layer of {DOC} but not in Package.swift")
    for name in sorted(set(position) & set(targets)):
        for d in sorted(deps[name]):
            if d in position and layers[position[name][0]] == "roles" and position[d][0] == position[name][0]:
                errors.append(f"{name} depends on {d}: roles stand side by side and never import one another")
            elif d in position and position[d] >= position[name]:
                errors.append(
                    f"{name} ({layers[position[name][0]]}) depends on {d} ({layers[position[d][0]]}), "
                    "which is not below it nor before it in its layer")

    for library, owner in C_OWNERS.items():
        users = {n for n in production if library in deps[n]}
        if users != {owner}:
            errors.append(f"{library} is used by {sorted(users)}; {DOC} says by {owner} alone")

    lowest = {name for name, (i, _) in position.items() if i < 4}
    for name in sorted(lowest & set(targets)):
        if products[name] & NETWORKING:
            errors.append(f"{name} uses {sorted(products[name] & NETWORKING)}, below the layer that does networking")
        if "GRDB" in products[name] and name not in SQLITE_USERS:
            errors.append(f"{name} uses GRDB; {DOC} says only {sorted(SQLITE_USERS)} do below the roles")

    declaration = r"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|final|private|fileprivate)\s+)*" \
                  r"(?:struct|class|actor|enum)\s+{}\b"
    for side in ("send-path-sender", "send-path-receiver"):
        rows = [line.split() for line in block(doc, side)]
        types = [row[0] for row in rows]
        if len(rows) > MAX_TYPES_PER_SIDE:
            errors.append(f"{side}: {len(rows)} types, more than {MAX_TYPES_PER_SIDE}")
        for t in sorted({t for t in types if types.count(t) > 1}):
            errors.append(f"{side}: {t} is passed twice")
        for row in rows:
            if len(row) != 3:
                errors.append(f"{side}: '{' '.join(row)}' is not 'Type Target Sources/file.swift'")
                continue
            name, target, path = row
            if not path.startswith(f"Sources/{target}/"):
                errors.append(f"{side}: {path} is not in target {target}")
            if not os.path.exists(path):
                errors.append(f"{side}: {path} does not exist")
            elif not re.search(declaration.format(re.escape(name)), open(path, encoding="utf-8").read(), re.M):
                errors.append(f"{side}: {name} is not declared in {path}")

    errors += closures_taken(OUTBOX)

    table = doc[doc.index("## Targets"):]
    table = table[:table.index("\n## ", 1)] if "\n## " in table[1:] else table
    named = set()
    for line in table.split("\n"):
        if line.startswith("| `"):
            named |= set(re.findall(r"`([^`]+)`", line.split("|")[1]))
    for name in sorted(set(position) - named):
        errors.append(f"{name} has no row in {DOC}'s Targets table")
    for name in sorted(named - set(position)):
        errors.append(f"{DOC}'s Targets table names {name}, which is in no layer")

    for e in errors:
        print(f"check-architecture: {e}", file=sys.stderr)
    if errors:
        print(f"check-architecture: {len(errors)} claim(s) of {DOC} do not hold: mend the code or the document",
              file=sys.stderr)
        return 1
    print(f"check-architecture: {DOC}'s layers, C library owners and send's path hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
