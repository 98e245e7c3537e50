"""Previews in the offer (protocol/messages.md "PREVIEW"): made by the sending agent, checked
and kept sealed by the receiving one, shown through the control API and the CLI before the
offer is decided; withheld with --no-preview; never written under policy trusted for a stranger."""

import json
import sqlite3
import struct
import subprocess
from pathlib import Path

import lfharness as h
from lfharness import finish, fixture, wait_for

JPG, PNG = fixture("sample.jpg"), fixture("sample.png")
MEDIA = h.REPO / "Tests" / "LocafotoMediaTests" / "Fixtures"


def pair(make_node):
    a = make_node("a")
    b = make_node("b")
    a.wait_sees(b)
    return a, b


def preview(node, offer: str, index: int) -> tuple[int, dict, bytes]:
    return h.http_unix(node.socket, "GET", f"/v1/inbox/{offer}/items/{index}/preview")


def jpeg_size(data: bytes) -> tuple[int, int]:
    """Width and height from the first SOF0/1/2 segment (an independent reading of the JPEG)."""
    assert data[:2] == b"\xff\xd8", data[:4]
    i = 2
    while i + 4 <= len(data):
        assert data[i] == 0xFF, f"no marker at {i}"
        marker = data[i + 1]
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        i += 2 + length
    raise AssertionError("no frame header")


def home_bytes(node) -> bytes:
    """Every file under the node's home, concatenated (database, WAL, spool, vault)."""
    out = b""
    for p in sorted(Path(node.home).rglob("*")):
        if p.is_file() and not p.is_socket():
            out += p.read_bytes()
    return out


def stored_previews(node) -> int:
    db = sqlite3.connect(f"file:{node.home / 'agent.sqlite'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT COUNT(*) FROM offerPreview").fetchone()[0]
    finally:
        db.close()


def test_preview_arrives_and_is_viewable_before_accepting(make_node, workdir):
    a, b = pair(make_node)
    sender = a.popen("send", b.fp_prefix, str(JPG), str(PNG), json=True)
    offer = b.wait_offer()
    assert offer["previewCount"] == 2, offer
    assert [i["preview"] for i in offer["items"]] == [True, True], offer["items"]

    shown = []
    for index in (0, 1):
        status, headers, data = preview(b, offer["id"][:8], index)
        assert status == 200, (status, data[:200])
        assert headers["content-type"] == "image/jpeg", headers
        assert len(data) <= 16384, len(data)
        width, height = jpeg_size(data)
        assert max(width, height) <= 160 and min(width, height) >= 1, (width, height)
        assert b"Exif" not in data and b"GPS" not in data, "the preview carries metadata"
        assert data.endswith(b"\xff\xd9")
        shown.append(data)

    # The CLI writes the same bytes (counting photos from 1, as people do), and says which
    # offers have previews.
    out = workdir / "p1.jpg"
    b.run("preview", offer["id"][:8], "1", "-o", str(out), json=False)
    assert out.read_bytes() == shown[0]
    piped = subprocess.run(b.cmd("preview", offer["id"][:8], "2", "-o", "-", json=False), capture_output=True,
                           env=h.clean_env(), timeout=60)
    assert piped.returncode == 0 and piped.stdout == shown[1], piped.stderr
    table = b.run("inbox", json=False).stdout
    assert "2 of 2 with a preview" in table, table
    missing = b.run("preview", offer["id"][:8], "7", "-o", str(workdir / "x.jpg"), json=False, check=False)
    assert missing.returncode == 66 and "no photo 7: it has 2, counted from 1" in missing.output, missing.output
    zero = b.run("preview", offer["id"][:8], "0", "-o", str(workdir / "x.jpg"), json=False, check=False)
    assert zero.returncode == 64 and "counted from 1" in zero.output, zero.output

    # Kept sealed to the node key: no file of the receiver's home holds the JPEG in clear.
    assert stored_previews(b) == 2
    everything = home_bytes(b)
    for data in shown:
        assert data[200:264] not in everything, "a preview is stored in clear"

    b.run("accept", offer["id"][:8])
    rc, out_text, err = finish(sender)
    assert rc == 0, f"send failed:\n{out_text}\n{err}"
    # An offer that ended keeps no preview.
    wait_for(lambda: stored_previews(b) == 0, what="the previews deleted with the ended offer")
    status, _, body = preview(b, offer["id"][:8], 0)
    assert status == 404 and json.loads(body)["error"]["code"] == "noPreview", (status, body)


def test_previews_follow_the_offer_announced_one_by_one(make_node):
    """Cap late-preview (protocol/messages.md "Late previews"): the offer is in the inbox before
    its previews are made; each one that comes is announced (`offer.preview`) and can be fetched
    at once; `previewsPending` counts those still due and is gone once they are all in."""
    from test_receive import open_events, read_until
    a, b = pair(make_node)
    conn, r = open_events(b, "?kinds=offer")
    assert json.loads(r.readline())["kind"] == "ready"
    sender = a.popen("send", b.fp_prefix, str(MEDIA / "upright.jpg"), str(MEDIA / "nothumb.heic"), str(MEDIA / "thumb.heic"),
                     json=True)
    arrived = read_until(r, "offer.received")[-1]
    assert arrived["state"] == "pending" and arrived["items"] == 3, arrived
    # Items 0 and 2 have a preview (an EXIF thumbnail, a HEIF thumbnail item), item 1 none.
    # Every late PREVIEW is announced: a kept one with its item, the one without (none made)
    # without, so a page drops its placeholder; the inbox counts it before the event.
    announced, without = [], 0
    for _ in range(3):
        e = read_until(r, "offer.preview")[-1]
        assert e["offer"] == arrived["offer"], e
        if "item" in e:
            status, headers, data = preview(b, e["offer"][:8], e["item"])
            assert status == 200 and headers["content-type"] == "image/jpeg" and data.endswith(b"\xff\xd9"), (status, e)
            announced.append(e["item"])
        else:
            without += 1
    conn.close()
    assert announced == [0, 2] and without == 1, (announced, without)
    [offer] = b.inbox()  # previewsPending gone by the last event: nothing more is coming
    assert "previewsPending" not in offer and offer["previewCount"] == 2, offer
    assert [i["preview"] for i in offer["items"]] == [True, False, True], offer["items"]
    assert stored_previews(b) == 2
    b.run("reject", offer["id"][:8])
    rc, out, err = finish(sender)
    assert rc != 0 and "declined" in out + err, out + err
    wait_for(lambda: stored_previews(b) == 0, what="the previews deleted with the rejected offer")


def test_send_noPreview_withholds_them(make_node):
    a, b = pair(make_node)
    sender = a.popen("send", "--no-preview", b.fp_prefix, str(JPG))
    offer = b.wait_offer()
    assert offer["previewCount"] == 0 and offer["items"][0]["preview"] is False, offer
    status, _, body = preview(b, offer["id"][:8], 0)
    assert status == 404, (status, body)
    assert json.loads(body)["error"]["code"] == "noPreview", body
    r = b.run("preview", offer["id"][:8], "-o", "/tmp/never-written.jpg", json=False, check=False)
    assert r.returncode == 66 and "photo 1 of offer" in r.output and "came without a preview" in r.output, r.output
    assert not Path("/tmp/never-written.jpg").exists()
    b.run("reject", offer["id"][:8])
    finish(sender)


def test_policy_trusted_keeps_nothing_of_a_stranger(make_node):
    """Under `trusted` an unknown sender's previews never reach the disk; the same photo's
    preview, received by a node under `everyone`, is what is looked for."""
    a = make_node("a")
    b = make_node("b")
    c = make_node("c")
    a.wait_sees(b)
    a.wait_sees(c)

    sender = a.popen("send", c.fp_prefix, str(JPG))
    offer = c.wait_offer()
    status, _, known = preview(c, offer["id"][:8], 0)
    assert status == 200, known
    c.run("reject", offer["id"][:8])
    finish(sender)

    b.run("policy", "trusted")
    rc, out, err = finish(a.popen("send", b.fp_prefix, str(JPG)))
    assert rc != 0 and "trusted" in out + err, f"{out}\n{err}"
    assert b.inbox(all=True) == []
    assert stored_previews(b) == 0
    everything = home_bytes(b)
    assert known[200:264] not in everything, "a stranger's preview was written to disk"


def hand_jpeg(width: int, height: int) -> bytes:
    """A preview-shaped JPEG built by hand (markers only; the receiver never trusts more)."""
    b = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    b += b"\xff\xdb\x00\x43\x00" + bytes(range(1, 65))
    b += b"\xff\xc0\x00\x0b\x08" + struct.pack(">HH", height, width) + b"\x01\x01\x11\x00"
    b += b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" + bytes([0x55] * 32)
    return b + b"\xff\xd9"


def test_hostile_previews_are_dropped_and_the_offer_stays(make_node):
    """A hostile sender (the Python peer, speaking the real protocol) offers five items with
    previews: a good one, a wrong hash, a 4000x3000 frame, a PNG, one sealed to another key. Only
    the good one is kept; the offer is not failed. PREVIEWs out of order end the session and
    leave nothing."""
    import base64

    import rogue
    from nacl.public import PrivateKey, PublicKey, SealedBox
    from nacl.bindings import crypto_sign_ed25519_pk_to_curve25519

    b = make_node("b")
    key = base64.b64decode(b.run("id")["publicKey"])
    box = SealedBox(PublicKey(crypto_sign_ed25519_pk_to_curve25519(key)))
    other = SealedBox(PrivateKey.generate().public_key)
    good = hand_jpeg(24, 16)
    png = b"\x89PNG\r\n\x1a\n" + bytes(40)
    contents = [(good, box), (good, box), (hand_jpeg(4000, 3000), box), (png, box), (good, other)]
    items = []
    for n, (jpeg, _) in enumerate(contents):
        item = rogue.fake_item(f"p{n}.jpg")
        claimed = hand_jpeg(30, 30) if n == 1 else jpeg  # item 1 announces another picture
        item["preview"] = {"size": len(claimed), "hash": rogue.pp.content_hash(claimed)}
        if n == 1:
            item["preview"]["size"] = len(jpeg)
        items.append(item)

    r = rogue.Rogue("hostile").connect(b.port)
    offer_id = r.offer(items)
    for n, (jpeg, sealer) in enumerate(contents):
        r.session.send_frame(r.session.noise.encrypt(bytes([0x0E]) + struct.pack(">I", n) + sealer.encrypt(jpeg)))
    offer = wait_for(lambda: next((o for o in b.inbox() if o["id"] == offer_id), None), what="the hostile offer in the inbox")
    assert [i["preview"] for i in offer["items"]] == [True, False, False, False, False], offer["items"]
    assert offer["previewCount"] == 1 and offer["state"] == "pending", offer
    status, _, data = preview(b, offer_id[:8], 0)
    assert status == 200 and data == good
    for n in range(1, 5):
        status, _, body = preview(b, offer_id[:8], n)
        assert status == 404 and json.loads(body)["error"]["code"] == "noPreview", (n, status, body)
    assert "dropped the preview of item 1" in b.log_text(), b.log_text()
    r.close()

    # Out of order: item 1's PREVIEW where item 0's is due is a protocol violation.
    r2 = rogue.Rogue("disorderly").connect(b.port)
    second = r2.offer([dict(items[0], id=rogue.fake_item("x")["id"]), dict(items[2], id=rogue.fake_item("y")["id"])])
    r2.session.send_frame(r2.session.noise.encrypt(bytes([0x0E]) + struct.pack(">I", 1) + box.encrypt(good)))
    mtype, body = r2.next_message()
    assert mtype == rogue.pp.ERROR and body["code"] == 1, (mtype, body)
    r2.close()
    assert all(o["id"] != second for o in b.inbox(all=True)), "an offer whose previews broke the protocol was stored"
    assert stored_previews(b) == 1



def test_previews_come_from_embedded_thumbnails_and_never_hold_the_offer(make_node):
    """Issue 24: a JPEG's EXIF thumbnail and a HEIC's thumbnail item are the previews (their sizes
    differ from what a decode of the photo gives: 80x120 turned from a 120x80 thumbnail, a 120x80
    item of a 1200x800 photo); a 1.6-megapixel HEIC without a thumbnail item is offered at once,
    without a preview, rather than decoded in full before the offer."""
    a, b = pair(make_node)
    sender = a.popen("send", b.fp_prefix, str(MEDIA / "thumb.jpg"), str(MEDIA / "nothumb.heic"),
                     str(MEDIA / "thumb.heic"), str(MEDIA / "photo.jpg"), str(MEDIA / "upright.jpg"))
    offer = b.wait_offer()
    assert [i["preview"] for i in offer["items"]] == [True, False, True, True, True], offer["items"]
    sizes, shown = [], []
    for index in (0, 2, 3, 4):
        status, _, data = preview(b, offer["id"][:8], index)
        assert status == 200, (status, data[:200])
        sizes.append(jpeg_size(data))
        shown.append(data)
    # thumb.jpg's 120x80 EXIF thumbnail turned by orientation 6; thumb.heic's 120x80 item; photo.jpg
    # (no thumbnail) shrunk on load to 160 px, turned; upright.jpg's thumbnail as it is in the file.
    assert sizes == [(80, 120), (120, 80), (107, 160), (120, 80)], sizes
    assert shown[3] in (MEDIA / "upright.jpg").read_bytes(), "the upright EXIF thumbnail is offered byte for byte"
    status, _, body = preview(b, offer["id"][:8], 1)
    assert status == 404 and json.loads(body)["error"]["code"] == "noPreview", (status, body)
    b.run("accept", offer["id"][:8])
    finish(sender)

    # The receiver's indexer read each photo's facts and made no thumbnail (none of these carries
    # one of 320 px); each is made when first asked for, the HEIC without a thumbnail item too.
    def indexed():
        rows = b.run("list")
        return len(rows) == 5 and all(b.run("show", r["id"][:8])["media"].get("width") for r in rows) and rows
    rows = wait_for(indexed, what="every received photo indexed")
    assert not any(b.run("show", r["id"][:8])["media"]["hasThumbnail"] for r in rows), "a thumbnail made before it was asked for"
    for r in rows:
        status, headers, data = h.http_unix(b.socket, "GET", f"/v1/photos/{r['id']}/thumbnail")
        assert status == 200 and data[:3] == b"\xff\xd8\xff" and max(jpeg_size(data)) <= 320, (status, r["name"])
        assert b.run("show", r["id"][:8])["media"]["hasThumbnail"], "the thumbnail made was not kept"

    # All of that decoding ran in media workers: libvips never entered either agent, and the
    # workers end once idle (their memory goes with them).
    for node in (a, b):
        maps = Path(f"/proc/{node.proc.pid}/maps").read_text()
        assert "libvips" not in maps and "libheif" not in maps, f"{node.key} loaded a decoder"
        wait_for(lambda: not media_workers(node.proc.pid), what=f"{node.key}'s idle media workers to end")


def media_workers(pid: int) -> list[int]:
    """The agent's live child processes running `locafoto media-worker`."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                if b"media-worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                    out.append(int(child))
            except OSError:
                pass
    return out
