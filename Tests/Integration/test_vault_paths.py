"""Issue 11 §2: the classify hook on every local import path (files: test_organise.py; `import -`,
`.lfs`, `open`). Real agents, real CLI."""

import json
import subprocess
import sys
from pathlib import Path

import lfharness as h
from lfharness import fixture, finish

MEDIA = Path(__file__).resolve().parents[1] / "LocafotoMediaTests" / "Fixtures"
LFS_TOOL = Path(__file__).resolve().parents[2] / "scripts" / "interop" / "lfs_tool.py"

# Refuses PNGs (by their magic bytes, read from stdin like any hook), tags everything else.
HOOK = ('#!/bin/sh\nhead -c 8 | od -An -tx1 | grep -q "89 50 4e 47" && { cat >/dev/null; echo "no PNG please" >&2; exit 3; }\n'
        'cat >/dev/null\necho "tag:hooked"\n')


def hooked_node(make_node, workdir, key="a"):
    hook = workdir / "hook.sh"
    hook.write_text(HOOK)
    hook.chmod(0o755)
    node = make_node(key, start=False)
    node.start("--classify-hook", str(hook))
    return node


def test_classify_hook_on_stdin_and_lfs_imports(make_node, workdir):
    a = hooked_node(make_node, workdir)
    # import - (the capture pipeline's path)
    vetoed = a.run("import", "-", "--name", "p.png", json=False, check=False, input=fixture("sample.png").read_bytes())
    assert vetoed.returncode == 65 and "refused by the classify hook: no PNG please" in vetoed.output, vetoed.output
    ok = a.run("import", "-", "--name", "j.jpg", input=fixture("sample.jpg").read_bytes())
    assert ok["tags"] == ["hooked"], ok

    # .lfs files (seed 001), made by the seed's Python tool
    a.run("key", "create", "fam")
    hexfile = workdir / "fam.hex"
    a.run("key", "export", "fam", "-o", str(hexfile), json=False)
    for src, out in ((fixture("sample.png"), "p.lfs"), (fixture("sample.webp"), "w.lfs")):
        subprocess.run([sys.executable, str(LFS_TOOL), "encrypt", "--key-hex-file", str(hexfile), "--name", "fam", str(src),
                        str(workdir / out)], check=True, capture_output=True)
    r = a.run("import", str(workdir / "p.lfs"), str(workdir / "w.lfs"), check=False, json=True)
    summary = r.data
    assert [Path(o["path"]).name for o in summary["imported"]] == ["w.lfs"], summary
    assert summary["imported"][0]["tags"] == ["hooked"], summary
    assert "no PNG please" in summary["skipped"][0]["reason"], summary
    names = sorted(p["name"] for p in a.photos())
    assert names == ["j.jpg", "w.webp"], names
    assert all(p["tags"] == ["hooked"] for p in a.photos()), a.photos()
    assert h.files_in(a.home / "vault" / "tmp") == []


def test_open_goes_through_the_classify_hook(make_node, workdir):
    a = make_node("a")
    b = hooked_node(make_node, workdir, "b")
    a.wait_sees(b)
    sender = a.popen("send", b.fp_prefix, str(fixture("sample.gif")))  # one handshake: a learns b's key
    b.run("reject", b.wait_offer()["id"][:8])
    assert finish(sender)[0] != 0
    jpg, png = workdir / "j.locaphoto", workdir / "p.locaphoto"
    a.run("bundle", str(fixture("sample.jpg")), "--to", b.fp_prefix, "-o", str(jpg))
    a.run("bundle", str(fixture("sample.png")), "--to", b.fp_prefix, "-o", str(png))
    vetoed = b.run("open", str(png), json=False, check=False)
    assert vetoed.returncode == 65 and "no PNG please" in vetoed.output, vetoed.output
    opened = b.run("open", str(jpg))
    assert opened["tags"] == ["hooked"], opened
    assert [p["id"] for p in b.photos()] == [opened["id"]]
