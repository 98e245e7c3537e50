"""What a person sees in a terminal (issue 10 §2): `--version`, and tables whose columns line up
in terminal cells when names hold CJK characters, emoji or combining accents."""
import re
import subprocess
import unicodedata

import lfharness as h


def cells(text: str) -> int:
    """Terminal cells of `text`, as terminals draw it (East Asian Wide/Fullwidth and emoji: 2,
    combining marks: 0) — computed here independently of the agent's own code."""
    n = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def test_version():
    p = subprocess.run([h.BIN, "--version"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(r"locafoto \d+\.\d+\.\d+ \(wire protocol 1\)\n", p.stdout), p.stdout


def test_list_columns_align_in_terminal_cells(make_node, workdir):
    a = make_node("a", name=h.unique("cells"))
    jpeg = h.fixture("sample.jpg").read_bytes()
    names = ["plain.jpg", "写真の海.jpg", "🌊 vague.jpg", "e\u0301te\u0301.jpg", "한국어 사진.jpg"]
    paths = []
    for i, name in enumerate(names):
        p = workdir / name
        p.write_bytes(jpeg + bytes([i]) * 64)  # distinct content: the vault keeps duplicates out
        paths.append(str(p))
    imported = a.run("import", *paths)["imported"]
    assert len(imported) == len(names), imported

    out = a.run("list", json=False).stdout
    lines = out.splitlines()
    header = lines[0]
    assert header.startswith("ID") and "FORMAT" in header, out
    format_at = cells(header[: header.index("FORMAT")])
    seen = 0
    for line in lines[1:]:
        name = next((n for n in names if n in line), None)
        if name is None:
            continue
        after = line.index(name) + len(name)
        rest = line[after:]
        column = after + (len(rest) - len(rest.lstrip(" ")))
        assert cells(line[:column]) == format_at, f"{name!r}: the next column starts at cell {cells(line[:column])}, " \
            f"the header's FORMAT at {format_at}:\n{out}"
        seen += 1
    assert seen == len(names), out
