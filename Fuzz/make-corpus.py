#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (Fuzz/corpus/<target>/) from the protocol
vectors (protocol/vectors/*.json), the Noise vectors (Tests/LocafotoNoiseTests/Vectors) and the
test fixtures (Tests/*/Fixtures). Deterministic: run it again after the vectors change and
commit the result. With target names, only those corpora are rewritten (the committed ones also
hold inputs the fuzzers found, which a run without names drops). Each seed is named after what it is; the input layout of each target is
described at the top of its Fuzz/Sources/<target>/Target.swift."""
import hashlib
import json
import shutil
import sqlite3
import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "Fuzz" / "corpus"
VEC = ROOT / "protocol" / "vectors"
FIX_MEDIA = ROOT / "Tests" / "LocafotoMediaTests" / "Fixtures"
FIX_FORMATS = ROOT / "Tests" / "LocafotoFormatsTests" / "Fixtures"

corpora: dict[str, dict[str, bytes]] = {}


def seed(target: str, name: str, data: bytes) -> None:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]
    digest = hashlib.sha1(data).hexdigest()[:8]
    corpora.setdefault(target, {})[f"{safe}-{digest}"] = data


def load(name: str):
    return json.loads((VEC / name).read_text())


def u16(n: int) -> bytes:
    return struct.pack(">H", n)


wire = load("wire-messages.json")
relay = load("relay-signatures.json")

# fuzz-wire-message: one decrypted transport message each.
for v in wire["vectors"] + relay["messages"]:
    seed("fuzz-wire-message", v["name"], bytes.fromhex(v["hex"]))
for v in wire["invalid"] + relay["invalid"]:
    if v["hex"]:
        seed("fuzz-wire-message", "invalid " + v["name"], bytes.fromhex(v["hex"]))

# fuzz-preview: the JPEG of a PREVIEW (after its box opened).
for v in wire["previews"]:
    jpeg = bytes.fromhex(v["jpeg"])
    seed("fuzz-preview", v["name"], jpeg)
    seed("fuzz-preview", v["name"] + " truncated", jpeg[:-5])
    seed("fuzz-preview", v["name"] + " with APP1", jpeg[:2] + b"\xff\xe1\x00\x08Exif\x00\x00" + jpeg[2:])
    seed("fuzz-preview", v["name"] + " progressive", jpeg.replace(b"\xff\xc0", b"\xff\xc2", 1))
for n in ["small.jpg"]:
    data = (FIX_MEDIA / n).read_bytes()
    if len(data) <= 16384:
        seed("fuzz-preview", n, data)

# fuzz-relay-message: wire messages separated by 0xFF (relayed offers, possibly in parts).
relay_msgs = [bytes.fromhex(v["hex"]) for v in relay["messages"]]
for v in relay["messages"]:
    seed("fuzz-relay-message", v["name"], bytes.fromhex(v["hex"]))
for v in relay["invalidOffers"]:
    seed("fuzz-relay-message", "invalid " + v["name"], b"\xff".join(bytes.fromhex(p) for p in v["parts"]))
seed("fuzz-relay-message", "collect queue offer", b"\xff".join(relay_msgs[6:10] + relay_msgs[:1]))
offers = [bytes.fromhex(v["hex"]) for v in wire["vectors"] if v["type"] in ("OFFER", "offer")]
if len(offers) >= 2:
    seed("fuzz-relay-message", "offer parts", b"\xff".join(offers))

# fuzz-frame: four u16 piece sizes, then a TCP byte stream of frames.
frames = b"".join(bytes.fromhex(f["frame"]) for f in wire["frames"])
messages = [bytes.fromhex(v["hex"]) for v in wire["vectors"]]
stream = b"".join(u16(len(m)) + m for m in messages if m)
for sizes in ([1, 1, 1, 1], [2, 3, 5, 7], [4095, 4095, 4095, 4095], [16, 1, 300, 2]):
    head = b"".join(u16(s - 1) for s in sizes)
    seed("fuzz-frame", f"vector frames pieces {sizes}", head + frames)
    seed("fuzz-frame", f"wire messages pieces {sizes}", head + stream)
seed("fuzz-frame", "empty frame after one", u16(0) * 4 + frames[:3] + b"\x00\x00" + frames)
seed("fuzz-frame", "truncated", u16(0) * 4 + stream[:-5])

# fuzz-noise: mode byte, then a handshake message (modes 0-2) or tamper choice + payloads (3).
caco = json.loads((ROOT / "Tests" / "LocafotoNoiseTests" / "Vectors" / "cacophony-25519.json").read_text())
xx = next(v for v in caco["vectors"] if v["protocol_name"] == "Noise_XX_25519_ChaChaPoly_BLAKE2b")
for mode in range(3):
    seed("fuzz-noise", f"mode {mode} cacophony XX message {mode + 1}", bytes([mode]) + bytes.fromhex(xx["messages"][mode]["ciphertext"]))
hello_hex = [bytes.fromhex(h["hex"]) for h in wire["hello"]]
for tamper in (3, 0, 1, 2):
    seed("fuzz-noise", f"mode 3 tamper {tamper}", bytes([3, tamper, 0, 40, 1]) + b"" + b"\xff" + hello_hex[0] + b"\xff" + hello_hex[-1])
seed("fuzz-noise", "mode 0 low order point", bytes([0]) + bytes(32) + b"payload")

# fuzz-hello: the HELLO JSON payload.
for h in wire["hello"]:
    seed("fuzz-hello", h["name"], bytes.fromhex(h["hex"]))
    seed("fuzz-hello", h["name"] + " canonical", bytes.fromhex(h["canonical"]))
seed("fuzz-hello", "hello with caps", json.dumps(
    {"v": 1, "ed25519": "/4ygicZ6VVHzKJuhdIv+DXvz0pcLxcLO71Im44B5CM4=", "name": "al\u200bice\u001b[31m", "caps": ["relay", "resume"]}).encode())

# fuzz-locaphoto: bundle files.
bundle = load("bundle.json")
for v in bundle["vectors"]:
    seed("fuzz-locaphoto", v["name"], v["file"].encode())
for v in bundle["invalid"]:
    seed("fuzz-locaphoto", "invalid " + v["name"], v["file"].encode())

# fuzz-loca: LOCA files.
for v in load("loca.json")["vectors"]:
    seed("fuzz-loca", v["name"], bytes.fromhex(v["file"]))

# fuzz-lfs: .lfs files, and shared keys as text.
lfs = load("lfs.json")
for v in lfs["valid"]:
    seed("fuzz-lfs", v["name"], bytes.fromhex(v["file"]))
for v in lfs["invalid"]:
    seed("fuzz-lfs", "invalid " + v["name"], bytes.fromhex(v["file"]))
seed("fuzz-lfs", "key hex", (lfs["valid"][0]["key"][:32] + "\n" + lfs["valid"][0]["key"][32:].upper() + "\n").encode())

# fuzz-backup: mode byte; 0 = raw file (the vector's first 4 KiB: a wrong key for the harness),
# 1 = records the harness encrypts: control (type | 0x80 final), u16 length, payload.
backup = (VEC / "backup-v1.locabak").read_bytes()
seed("fuzz-backup", "raw vector prefix", b"\x00" + backup[:4096])
seed("fuzz-backup", "raw vector header only", b"\x00" + backup[:12 + struct.unpack(">I", backup[8:12])[0]])


def catalog(rows: list[str]) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "c.sqlite"
        db = sqlite3.connect(path)
        db.execute("PRAGMA page_size=512")
        db.execute("CREATE TABLE photo (filePath TEXT)")
        db.executemany("INSERT INTO photo VALUES (?)", [(r,) for r in rows])
        db.commit()
        db.execute("VACUUM")
        db.close()
        return path.read_bytes()


def record(kind: int, payload: bytes, final: bool = False) -> bytes:
    return bytes([kind | (0x80 if final else 0)]) + u16(len(payload)) + payload


empty_catalog = catalog([])
photo = "photos/ab/ab3f2c8a-7b4d-4c6e-9f10-a1b2c3d4e5f6.loca"
good = (record(1, json.dumps({"path": "catalog.sqlite", "size": len(empty_catalog)}).encode())
        + record(2, empty_catalog) + record(3, b'{"files":1}', final=True))
seed("fuzz-backup", "records restore an empty vault", b"\x01" + good)
seed("fuzz-backup", "records with a photo file", b"\x01" + record(1, json.dumps({"path": "catalog.sqlite", "size": len(empty_catalog)}).encode())
     + record(2, empty_catalog) + record(1, json.dumps({"path": photo, "size": 3}).encode()) + record(2, b"abc")
     + record(3, b'{"files":2}', final=True))
seed("fuzz-backup", "records path traversal", b"\x01" + record(1, b'{"path":"../x","size":1}') + record(2, b"x") + record(3, b'{"files":1}', final=True))
seed("fuzz-backup", "records catalog listing a photo", b"\x01" + record(1, json.dumps({"path": "catalog.sqlite", "size": len(catalog([photo]))}).encode())
     + record(2, catalog([photo])) + record(3, b'{"files":1}', final=True))
seed("fuzz-backup", "records trailing bytes", b"\x01" + good + b"junk")

# fuzz-txt: TXT RDATA (length-prefixed strings).
fp = load("fingerprint.json")["vectors"][0]["fingerprint"]


def txt(*entries: str | bytes) -> bytes:
    out = b""
    for e in entries:
        b = e if isinstance(e, bytes) else e.encode()
        out += bytes([len(b)]) + b
    return out


seed("fuzz-txt", "agent", txt("v=1", f"fp={fp}", "name=alice"))
seed("fuzz-txt", "relay", txt("v=1", f"fp={fp}", "name=relay", "role=relay"))

# fuzz-web-login: a Cookie header line, 0x00, a login code.
session = "k8a86g6XKMoGxDzLcPwqBDEQvtbZza2jpuYqsLhD7vU"
seed("fuzz-web-login", "cookie and code", f"locafoto-47821={session}; theme=dark".encode() + b"\0" + session.encode())
seed("fuzz-web-login", "several cookies", f"a=1;  locafoto-47821 = {session} ;b".encode())
seed("fuzz-web-login", "empty value", b"locafoto-47821=; locafoto-47821=x\0" + b"=" * 43)
seed("fuzz-web-login", "padded code", b"\0" + session[:42].encode() + b"=")
seed("fuzz-web-login", "non-canonical code", b"\0" + session[:42].encode() + b"P")  # found by the fuzzer
# fuzz-localsend: prepare-upload bodies and device announcements (LocalSend v2 README, §3.1, §4.1).
ls_info = {"alias": "Nice Orange", "version": "2.1", "deviceModel": "Samsung", "deviceType": "mobile",
           "fingerprint": "3F2A" * 16, "port": 53317, "protocol": "https", "download": False}
ls_file = {"id": "f1", "fileName": "IMG_0001.jpg", "size": 1432112, "fileType": "image/jpeg",
           "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "preview": None,
           "metadata": {"modified": "2026-11-20T10:00:00Z", "accessed": None}}
seed("fuzz-localsend", "prepare-upload", json.dumps({"info": ls_info, "files": {"f1": ls_file}}).encode())
seed("fuzz-localsend", "prepare-upload two files", json.dumps({"info": ls_info, "files": {
    "a": {**ls_file, "id": "a", "fileName": "a.heic", "fileType": "image/heic", "sha256": None},
    "b": {**ls_file, "id": "b", "fileName": "..", "size": 0}}}).encode())
seed("fuzz-localsend", "announcement", json.dumps({**ls_info, "announce": True}).encode())
seed("fuzz-localsend", "hostile alias", json.dumps({**ls_info, "alias": "Bob\u001b[2J\u202e"}).encode())
seed("fuzz-localsend", "register", json.dumps({**ls_info, "deviceType": "headless", "version": "2.0"}).encode())
seed("fuzz-txt", "duplicate keys and bare key", txt("v=1", "v=2", f"fp={fp.lower()}", "name", "", "name=bob"))
seed("fuzz-txt", "lowercase fp without dashes", txt("v=1", "fp=" + fp.replace("-", "").lower(), "name=\u202ebob\x1b"))
seed("fuzz-txt", "truncated", txt("v=1", f"fp={fp}")[:-3])

# Media: photos and the EXIF blocks inside them.
media = {"fuzz-jpeg": ["photo.jpg", "nogps.jpg", "small.jpg", "thumb.jpg", "upright.jpg"], "fuzz-png": ["photo.png", "plain.png"],
         "fuzz-webp": ["photo.webp"], "fuzz-heif": ["photo.heic", "thumb.heic"], "fuzz-tiff": ["photo.tiff"]}
formats = {"fuzz-jpeg": ["sample.jpg"], "fuzz-png": ["sample.png"], "fuzz-webp": ["sample.webp"],
           "fuzz-heif": ["sample.heic", "sample.avif"], "fuzz-tiff": ["sample.tiff", "sample-be.tiff"]}
for target, names in media.items():
    for n in names:
        seed(target, n, (FIX_MEDIA / n).read_bytes())
    for n in formats[target]:
        seed(target, n, (FIX_FORMATS / n).read_bytes())


def jpeg_exif(b: bytes):
    i = 2
    while i + 4 <= len(b) and b[i] == 0xFF:
        m, n = b[i + 1], struct.unpack(">H", b[i + 2:i + 4])[0]
        if m == 0xDA:
            return
        if m == 0xE1 and b[i + 4:i + 10] == b"Exif\x00\x00":
            yield b[i + 4:i + 2 + n]
        i += 2 + n


def png_exif(b: bytes):
    i = 8
    while i + 8 <= len(b):
        n = struct.unpack(">I", b[i:i + 4])[0]
        if b[i + 4:i + 8] == b"eXIf":
            yield b[i + 8:i + 8 + n]
        i += 12 + n


def webp_exif(b: bytes):
    i = 12
    while i + 8 <= len(b):
        n = struct.unpack("<I", b[i + 4:i + 8])[0]
        if b[i:i + 4] == b"EXIF":
            yield b[i + 8:i + 8 + n]
        i += 8 + n + (n & 1)


for n in ["photo.jpg", "nogps.jpg", "small.jpg"]:
    for block in jpeg_exif((FIX_MEDIA / n).read_bytes()):
        seed("fuzz-exif", n + " APP1", block)
for block in png_exif((FIX_MEDIA / "photo.png").read_bytes()):
    seed("fuzz-exif", "photo.png eXIf", block)
for block in webp_exif((FIX_MEDIA / "photo.webp").read_bytes()):
    seed("fuzz-exif", "photo.webp EXIF", block)
seed("fuzz-exif", "photo.tiff", (FIX_MEDIA / "photo.tiff").read_bytes())

# fuzz-image-header: the first byte picks the format (ContentType's order: jpeg png heic heif
# avif webp gif tiff), the rest is the file: real images, cut ones, and a signature before HTML.
IMAGE_FORMATS = ["jpeg", "png", "heic", "heif", "avif", "webp", "gif", "tiff"]
for n, fmt in [("sample.jpg", "jpeg"), ("sample.png", "png"), ("sample.heic", "heic"), ("sample.avif", "avif"),
               ("sample.webp", "webp"), ("sample.gif", "gif"), ("sample.tiff", "tiff"), ("sample-be.tiff", "tiff")]:
    data = (FIX_FORMATS / n).read_bytes()
    tag = bytes([IMAGE_FORMATS.index(fmt)])
    seed("fuzz-image-header", n, tag + data)
    seed("fuzz-image-header", n + " cut", tag + data[:len(data) // 3])
seed("fuzz-image-header", "jpeg signature then html", b"\x00\xff\xd8\xff<html><body>hi</body></html>")
seed("fuzz-image-header", "photo.jpg head", b"\x00" + (FIX_MEDIA / "photo.jpg").read_bytes()[:4096])

if __name__ == "__main__":
    # `make-corpus.py TARGET...` rewrites those corpora only: the committed ones also hold inputs
    # the fuzzers found (named by their SHA-1), which a whole rewrite would drop.
    wanted = sys.argv[1:] or sorted(corpora)
    unknown = [t for t in wanted if t not in corpora]
    if unknown:
        sys.exit(f"make-corpus.py: no seeds for {', '.join(unknown)}; known: {', '.join(sorted(corpora))}")
    if not sys.argv[1:] and OUT.exists():
        shutil.rmtree(OUT)
    total = 0
    for target in wanted:
        seeds = corpora[target]
        d = OUT / target
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        for name, data in sorted(seeds.items()):
            (d / name).write_bytes(data)
            total += len(data)
        print(f"{target}: {len(seeds)} seeds")
    print(f"total {total} bytes", file=sys.stderr)
