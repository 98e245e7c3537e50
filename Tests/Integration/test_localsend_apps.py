"""Issue 42: LocalSend as the apps speak it. A device that registers in answer to the node's
announcement is sendable by name; folders arrive into an album; a sender whose upload connection
dropped and then cancels ends `cancelled`; a JPEG signature before a web page is not a photo; a
sender without a certificate is shown as such. The receiving device is localsendd (which we did
not write); the senders are a client of our own that behaves as the apps do.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading

import lfharness as h
from test_localsend import JPEG, RawPeer, accepted_session, file_entry, lsd, node_with_localsend  # noqa: F401
from test_localsend_limits import client_context
from test_localsend_send import downloads


def test_a_device_that_registers_is_sendable_by_name(make_node, lsd, workdir):
    a, port = node_with_localsend(make_node, "a")
    laptop = lsd("Spec Laptop", "--unattended")
    raw = RawPeer(workdir, "spec")
    # The device answers the node's announcement with POST /register, saying who it is and
    # where its server listens (multicast is off in these tests; the register is what counts).
    device = {"alias": "Spec Laptop", "version": "2.1", "deviceModel": "spec", "deviceType": "desktop",
              "fingerprint": laptop.fingerprint, "port": laptop.port, "protocol": "https", "download": False}
    got, text = raw.request(port, "POST", "register", json.dumps(device).encode())
    assert got == 200 and json.loads(text)["alias"] == a.name, (got, text)
    nearby = a.run("localsend")["nearby"]
    assert [(n["alias"], n["fingerprint"]) for n in nearby] == [("Spec Laptop", laptop.fingerprint)], nearby
    t = a.run("send", "Spec Laptop", str(JPEG))
    assert t["state"] == "done", t
    assert downloads(laptop) == {"photo.jpg": JPEG.read_bytes()}
    # A name neither list has is said so, naming both lists.
    r = a.run("send", "Nobody Here", str(JPEG), check=False)
    message = r.data["error"]["message"]
    assert r.returncode == 66 and "no peer or LocalSend device named 'Nobody Here'" in message, message
    assert "`locafoto localsend`" in message, message


def test_a_folder_arrives_into_its_album(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir, "phone")
    files = {"a": file_entry("a", JPEG, fileName="Holiday/2024/IMG_1006.jpg")}
    answer = accepted_session(b, raw, port, files)
    q = f"upload?sessionId={answer['sessionId']}&fileId=a&token={answer['files']['a']}"
    assert raw.request(port, "POST", q, JPEG.read_bytes())[0] == 200
    assert b.ended_offer(answer["sessionId"])["state"] == "completed"
    photos = b.photos()
    assert [p["name"] for p in photos] == ["IMG_1006.jpg"], photos
    assert [p["id"] for p in b.run("list", "--album", "Holiday")] == [photos[0]["id"]]


def test_a_cancel_after_a_dropped_upload_ends_cancelled(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir, "phone")
    answer = accepted_session(b, raw, port, {"a": file_entry("a", JPEG)})
    sid = answer["sessionId"]
    data = JPEG.read_bytes()
    # Half the photo, then the upload's connection drops (as an app that gives up does)...
    s = client_context(raw).wrap_socket(socket.create_connection(("127.0.0.1", port)))
    s.sendall(f"POST /api/localsend/v2/upload?sessionId={sid}&fileId=a&token={answer['files']['a']} HTTP/1.1\r\n"
              f"Host: x\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data[: len(data) // 2])
    s.close()
    # ...and its cancel comes on another connection.
    got, text = raw.request(port, "POST", f"cancel?sessionId={sid}")
    assert got == 200, (got, text)
    done = b.ended_offer(sid)
    assert done["state"] == "cancelled", done
    assert b.photos() == []
    leftovers = [f for f in (b.home / "vault" / "tmp").rglob("*") if f.is_file()]
    assert leftovers == [], leftovers


def test_a_jpeg_signature_before_a_web_page_is_not_stored(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir, "phone")
    page = b"\xff\xd8\xff<html><body><script>alert(1)</script></body></html>\n" * 20
    elf = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + b"\x7fELF" + b"\x00" * 400
    files = {"page": {**file_entry("page", JPEG), "fileName": "holiday.jpg", "size": len(page),
                      "sha256": hashlib.sha256(page).hexdigest()},
             "elf": {**file_entry("elf", JPEG), "fileName": "tool.jpg", "size": len(elf),
                     "sha256": hashlib.sha256(elf).hexdigest()}}
    answer = accepted_session(b, raw, port, files)
    for fid, data in (("page", page), ("elf", elf)):
        q = f"upload?sessionId={answer['sessionId']}&fileId={fid}&token={answer['files'][fid]}"
        got, text = raw.request(port, "POST", q, data)
        assert got == 415 and b"is not one" in text, (fid, got, text)
    assert b.ended_offer(answer["sessionId"])["state"] == "failed"
    assert b.photos() == []


def test_a_sender_without_a_certificate_is_shown_as_such(make_node, workdir):
    b, port = node_with_localsend(make_node)
    raw = RawPeer(workdir, "oldphone")
    out = {}
    t = threading.Thread(target=lambda: out.update(
        answer=raw.prepare(port, {"a": file_entry("a", JPEG)}, certificate=False)))
    t.start()
    offer = b.wait_offer(previews=False)
    assert offer["sender"]["fingerprint"].startswith("localsend:unverified:"), offer
    assert offer["sender"]["trusted"] is False
    shown = b.run("inbox", json=False).stdout
    assert "oldphone (LocalSend, no certificate)" in shown, shown
    b.run("reject", offer["id"][:8])
    t.join(timeout=120)
    assert out["answer"][0] == 403
    # Nothing of it is recorded: it cannot be trusted, by name or otherwise.
    assert b.run("localsend")["devices"] == []


def test_a_device_heard_but_not_met_can_be_trusted_before_its_first_offer(make_node, workdir):
    """Under `policy trusted` no untrusted offer reaches the inbox (where a device is recorded):
    the user trusts the device as it was heard, and its first offer is then taken."""
    b, port = node_with_localsend(make_node)
    phone = RawPeer(workdir, "Heard Phone")
    got, _ = phone.request(port, "POST", "register", json.dumps(phone.info()).encode())
    assert got == 200
    trusted = b.run("localsend", "trust", "Heard Phone")
    assert trusted["trust"] == "trusted" and trusted["fingerprint"] == phone.fingerprint, trusted
    b.run("policy", "trusted")
    # Another certificate under that name is refused; the heard one's offer is accepted at once.
    (workdir / "impostor").mkdir()
    impostor = RawPeer(workdir / "impostor", "Heard Phone")
    got, text = impostor.prepare(port, {"a": file_entry("a", JPEG)})
    assert got == 403, (got, text)
    got, text = phone.prepare(port, {"a": file_entry("a", JPEG)})
    assert got == 200, (got, text)
    answer = json.loads(text)
    q = f"upload?sessionId={answer['sessionId']}&fileId=a&token={answer['files']['a']}"
    assert phone.request(port, "POST", q, JPEG.read_bytes())[0] == 200
    assert [p["name"] for p in b.photos()] == ["photo.jpg"]
