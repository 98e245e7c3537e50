"""Local vault operations and .locaphoto bundles."""

import json

import lfharness as h
from lfharness import fixture, finish

FIXTURES = ["sample.jpg", "sample.png", "sample.heic", "sample.webp"]


def test_import_export_local(make_node, workdir):
    a = make_node("a", name=h.unique("itlocal"))
    # Discovery is not needed for this one.
    paths = [str(fixture(n)) for n in FIXTURES]
    r = a.run("import", *paths)
    assert [o["path"] for o in r["imported"]] == paths and r["skipped"] == [], r
    # Importing the same files again skips them as duplicates (and that is not a failure).
    again = a.run("import", *paths)
    assert again["imported"] == [] and len(again["skipped"]) == 4, again
    assert all("already in the vault" in o["reason"] for o in again["skipped"]), again
    r = r["imported"]
    photos = a.photos()
    assert len(photos) == 4
    assert sorted(p["format"] for p in photos) == ["heic", "jpeg", "png", "webp"], photos
    for p in photos:
        assert "sender" not in p or p["sender"] is None, p

    # From standard input (streamed).
    webp = fixture("sample.webp").read_bytes()
    s = a.run("import", "-", "--name", "piped.webp", input=webp)
    assert s["format"] == "webp" and s["originalBytes"] == len(webp), s
    piped_noname = a.run("import", "-", input=fixture("sample.png").read_bytes())
    assert piped_noname["format"] == "png"
    photos = a.photos()
    assert len(photos) == 6

    # Byte-identical exports.
    by_id = {o["photo"]: fixture(FIXTURES[i]) for i, o in enumerate(r)}
    by_id[s["id"]] = fixture("sample.webp")
    by_id[piped_noname["id"]] = fixture("sample.png")
    for pid, src in by_id.items():
        assert h.export_bytes(a, pid, workdir / "out" / pid[:8]) == src.read_bytes(), f"export of {src.name} differs"

    # Exporting twice into one folder does not overwrite silently.
    (workdir / "twice").mkdir()
    first = a.run("export", s["id"][:8], str(workdir / "twice"))
    again = a.run("export", s["id"][:8], str(workdir / "twice"), check=False)
    if again.returncode == 0:
        assert again.data["path"] != first["path"], "export overwrote an existing file"
    else:
        assert again.output.strip()

    # Not an image: refused, nothing stored.
    bad = a.run("import", str(fixture("not-an-image.txt")), json=False, check=False)
    assert bad.returncode != 0
    assert "not-an-image.txt" in bad.output and "not a supported image" in bad.output, bad.output
    assert len(a.photos()) == 6
    assert h.files_in(a.home / "vault" / "tmp") == []

    # Unknown photo id.
    missing = a.run("export", "ffffffff", str(workdir / "none"), check=False)
    assert missing.returncode != 0 and missing.output.strip()

    # From standard input: the agent refuses after the first bytes, while the CLI may still be
    # writing; the refusal must still reach the user. Small input (a race: repeated) and a large
    # stream (always still writing).
    inputs = [fixture("not-an-image.txt").read_bytes()] * 5 + [b"\x00not an image" * (8 << 16)]
    outcomes = []
    for data in inputs:
        r = a.run("import", "-", json=False, check=False, input=data)
        outcomes.append((len(data), r.returncode, r.output.strip()))
    assert len(a.photos()) == 6
    assert h.files_in(a.home / "vault" / "tmp") == [], "a refused stream left a temporary file"
    bad = [o for o in outcomes if o[1] != 65 or "not a supported image" not in o[2]]  # 65: refused content
    assert not bad, "`import -` of non-image data did not fail with the agent's message:\n" + "\n".join(
        f"  {n} bytes: status {rc}, output {out!r}" for n, rc, out in bad)


def test_locaphoto_bundle(make_node, workdir):
    a = make_node("a")
    b = make_node("b")
    a.wait_sees(b)

    # Bundling needs the recipient's key: refused before any exchange.
    early = a.run("bundle", str(fixture("sample.jpg")), "--to", b.fp_prefix, "-o", str(workdir / "early.locaphoto"), check=False)
    assert early.returncode != 0 and "not known" in early.output, early.output
    assert not (workdir / "early.locaphoto").exists()

    # One handshake (a rejected offer is enough) so that A has B's key.
    sender = a.popen("send", b.fp_prefix, str(fixture("sample.png")))
    b.run("reject", b.wait_offer()["id"][:8])
    assert finish(sender)[0] != 0

    out = workdir / "x.locaphoto"
    r = a.run("bundle", str(fixture("sample.jpg")), "--to", b.fp_prefix, "-o", str(out))
    assert r["recipient"]["fingerprint"] == b.fingerprint and out.exists(), r
    doc = json.loads(out.read_text())
    assert doc["sender"]["fingerprint"] == a.fingerprint
    exists = a.run("bundle", str(fixture("sample.jpg")), "--to", b.fp_prefix, "-o", str(out), check=False)
    assert exists.returncode != 0 and "exists" in exists.output, exists.output

    # A corrupted copy: one base64 character in the middle of the ciphertext changed.
    data = doc["photo"]["encryptedData"]
    mid = len(data) // 2
    flipped = "B" if data[mid] != "B" else "C"
    doc["photo"]["encryptedData"] = data[:mid] + flipped + data[mid + 1:]
    corrupt = workdir / "corrupt.locaphoto"
    corrupt.write_text(json.dumps(doc))
    bad = b.run("open", str(corrupt), check=False)
    assert bad.returncode != 0, f"a corrupted bundle was accepted:\n{bad.output}"
    assert "altered" in bad.output, f"unclear message: {bad.output}"
    # Tampered metadata: the signature no longer verifies.
    doc = json.loads(out.read_text())
    doc["metadata"]["name"] = "renamed.jpg"
    tampered = workdir / "tampered.locaphoto"
    tampered.write_text(json.dumps(doc))
    bad = b.run("open", str(tampered), check=False)
    assert bad.returncode != 0 and "signature" in bad.output, f"tampered metadata accepted or unclear:\n{bad.output}"
    assert b.photos() == [], "a corrupted bundle stored a photo"
    assert h.files_in(b.vault_photos) == []

    # Not addressed to A.
    wrong = a.run("open", str(out), check=False)
    assert wrong.returncode != 0, f"the sender could open a bundle addressed to someone else:\n{wrong.output}"
    assert "addressed to another node" in wrong.output, wrong.output
    assert a.photos() == []

    # Garbage.
    junk = workdir / "junk.locaphoto"
    junk.write_text("hello")
    j = b.run("open", str(junk), check=False)
    assert j.returncode != 0 and "locaphoto" in j.output, j.output

    p = b.run("open", str(out))
    assert p["sender"]["fingerprint"] == a.fingerprint, p
    photos = b.photos()
    assert len(photos) == 1 and photos[0]["sender"]["fingerprint"] == a.fingerprint
    assert h.export_bytes(b, photos[0]["id"], workdir / "exp") == fixture("sample.jpg").read_bytes()
