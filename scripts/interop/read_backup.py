#!/usr/bin/env python3
"""Independent reader of Locafoto vault backups (protocol/formats.md "Vault backup" and "Keys
at rest").

Written from the format description, with PyNaCl, `cryptography`, hashlib and sqlite3 only,
never the Swift code, so that it checks the format as documented rather than as implemented:

    pip install pynacl cryptography
    python3 scripts/interop/read_backup.py vault.locabak --passphrase-file pass [--extract DIR] [--json]

What it verifies, in order:

1. magic "LOCABAK\\0"; header length 1 ... 65536; the header is a UTF-8 JSON object (no
   duplicate keys) with version 1, an RFC 3339 `created`, kdfAlgorithm "argon2id13", a 16-byte
   salt, sane Argon2id limits, a 72-byte wrappedMasterKey and a photo count;
2. KEK = Argon2id13(passphrase, salt, ops, mem); master key = XChaCha20-Poly1305 open of
   wrappedMasterKey (nonce 24 || ct || tag 16, associated data "locafoto vault master key v1");
   a failure here is reported as a wrong passphrase;
3. stream key = crypto_kdf_derive_from_key(32, 1, "LOCABAK1", master), computed as BLAKE2b-256
   keyed with the master key, salt = id as 8 bytes little-endian + 8 zero bytes, person = the
   context + 8 zero bytes (what libsodium's crypto_kdf_blake2b_derive_from_key does);
4. the secretstream: its 24-byte header, then records (u32 BE length, ciphertext of a plaintext
   of 1 ... 1 MiB + 64 bytes), the first authenticated with the backup header as associated
   data; every record but the last tagged TAG_MESSAGE, the last one an END record tagged
   TAG_FINAL, nothing after it; FILE records name only the documented paths (each once) and
   are followed by exactly their declared number of bytes in DATA records; END's `files`
   equals the number of FILE records;
5. the catalog snapshot opens with sqlite3 and passes `PRAGMA integrity_check`; it holds as
   many photos as the header says; every photo's file is in the backup at
   photos/<id[:2]>/<id>.loca; every thumbnail belongs to a listed photo and is a well-formed
   LOCA file (formats.md does not say which key encrypts thumbnails, so they are not opened);
6. for each photo: its key opens (KeyWrap under the master key, associated data = the photo
   id's UTF-8 bytes); its LOCA file has a valid 64-byte header whose size matches the catalog
   and the file length; the AEAD tag verifies (ChaCha20-Poly1305 or AES-256-GCM, no associated
   data); the plaintext's BLAKE2b-256 equals the catalog's contentHash. Photos of a private
   album (key wrapped under the album's own key) are listed but cannot be opened with the vault
   passphrase alone; they are reported, not decrypted.

Everything is written to a staging folder first; with --extract DIR the files (catalog.sqlite,
photos/, thumbs/, still encrypted as stored) are moved to DIR only once all of the above passed.
DIR must not exist or be an empty folder.

Output: one line per photo (name, size, SHA-256 of the plaintext), or with --json one JSON
object. Exit status: 0 verified, 1 the backup is refused (message on stderr), 2 usage error.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import datetime
import hashlib
import json
import os
import re
import shutil
import sqlite3
import struct
import sys
import tempfile

try:
    import nacl.bindings as sodium
    import nacl.exceptions
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"read_backup: needs PyNaCl and cryptography (pip install pynacl cryptography): {e}\n")
    sys.exit(2)

MAGIC = b"LOCABAK\x00"
MAX_HEADER = 65536
MAX_PLAINTEXT = (1 << 20) + 64
SS_HEADER = sodium.crypto_secretstream_xchacha20poly1305_HEADERBYTES  # 24
SS_ABYTES = sodium.crypto_secretstream_xchacha20poly1305_ABYTES  # 17
TAG_MESSAGE = sodium.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE
TAG_FINAL = sodium.crypto_secretstream_xchacha20poly1305_TAG_FINAL
MASTER_KEY_AAD = b"locafoto vault master key v1"
KDF_CONTEXT = b"LOCABAK1"
KDF_SUBKEY_ID = 1
SALT_BYTES = 16
KEYWRAP_LEN = 24 + 32 + 16
# The format does not bound the Argon2id limits; a reader must, or a hostile header could ask for
# terabytes of memory. libsodium's own minimums for ALG_ARGON2ID13 are 1 pass and 8 KiB.
OPS_RANGE = (1, 16)
MEM_RANGE = (8 << 20, 4 << 30)

REC_FILE, REC_DATA, REC_END = 1, 2, 3

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
PATH_RE = re.compile(r"(photos|thumbs)/([0-9a-f]{2})/(" + _UUID + r")\.loca")

LOCA_MAGIC = b"LOCA"
LOCA_HEADER = 64
LOCA_TAG = 16
LOCA_MAX = 4 << 30


class Refused(Exception):
    """The backup is refused; the message says why."""


# -- small helpers --------------------------------------------------------------------------

def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise Refused(f"duplicate JSON key {k!r}")
        d[k] = v
    return d


def parse_json(data: bytes, what: str) -> dict:
    try:
        obj = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except Refused as e:
        raise Refused(f"{what}: {e}") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise Refused(f"{what} is not UTF-8 JSON: {e}") from None
    if not isinstance(obj, dict):
        raise Refused(f"{what} is not a JSON object")
    return obj


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def b64(v, what: str) -> bytes:
    if not isinstance(v, str):
        raise Refused(f"header field {what} is not a string")
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        raise Refused(f"header field {what} is not base64") from None


def kdf_derive_from_key(key: bytes, subkey_id: int, context: bytes, length: int = 32) -> bytes:
    """libsodium crypto_kdf_derive_from_key (crypto_kdf_blake2b): BLAKE2b with the key, salt =
    LE64(id) || 0^8, personal = context || 0^8, empty message."""
    assert len(context) == 8 and len(key) == 32 and 16 <= length <= 64
    salt = struct.pack("<Q", subkey_id) + bytes(8)
    person = context + bytes(8)
    return hashlib.blake2b(b"", digest_size=length, key=key, salt=salt, person=person).digest()


def catalog_subkey(master: bytes, subkey_id: int) -> bytes:
    """crypto_kdf_derive_from_key(32, subkey_id, "LFCATLG1", master): BLAKE2b keyed with the
    parent key, salt = the id as 8 little-endian bytes + 8 zeros, personal = context + 8 zeros."""
    return hashlib.blake2b(b"", key=master, digest_size=32, salt=struct.pack("<Q", subkey_id) + bytes(8),
                           person=b"LFCATLG1" + bytes(8)).digest()


def open_photo_record(sealed: bytes, photo_id: str, master: bytes) -> dict | None:
    """The JSON of a sealed catalog record (formats.md "Sealed catalog"), or None for a record of
    a private album (class 0x02: its key needs the album's passphrase). Refused when it does not open."""
    if len(sealed) < 1 + 24 + 16 or sealed[0] not in (1, 2):
        raise Refused(f"photo {photo_id}: its sealed catalog record is malformed")
    if sealed[0] == 2:
        return None
    aad = b"locafoto catalog row v1:" + bytes([1]) + photo_id.encode("utf-8")
    try:
        plain = sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
            sealed[25:], aad, sealed[1:25], catalog_subkey(master, 1))
    except nacl.exceptions.CryptoError:
        raise Refused(f"photo {photo_id}: its sealed catalog record does not open under the master key") from None
    try:
        fields = json.loads(plain)
    except ValueError:
        raise Refused(f"photo {photo_id}: its sealed catalog record is not JSON") from None
    if not isinstance(fields, dict):
        raise Refused(f"photo {photo_id}: its sealed catalog record is not a JSON object")
    return fields


def keywrap_open(wrapped: bytes, kek: bytes, aad: bytes) -> bytes:
    """KeyWrap: XChaCha20-Poly1305, nonce 24 || ciphertext || tag 16."""
    if len(wrapped) != KEYWRAP_LEN:
        raise Refused(f"a wrapped key is {len(wrapped)} bytes, not {KEYWRAP_LEN}")
    return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(wrapped[24:], aad, wrapped[:24], kek)


def read_passphrase(path: str) -> bytes:
    """As the locafoto CLI reads --passphrase-file: the bytes, less one trailing LF and then
    one trailing CR."""
    try:
        with open(path, "rb") as f:
            b = f.read()
    except OSError as e:
        raise Refused(f"cannot read the passphrase file {path}: {e.strerror}") from None
    if b.endswith(b"\n"):
        b = b[:-1]
    if b.endswith(b"\r"):
        b = b[:-1]
    if not b:
        raise Refused(f"the passphrase file {path} is empty")
    return b


# -- the backup stream ----------------------------------------------------------------------

class Reader:
    def __init__(self, f, path: str):
        self.f = f
        self.path = path
        self.offset = 0

    def exact(self, n: int, what: str) -> bytes:
        b = self.f.read(n)
        if len(b) != n:
            raise Refused(f"{self.path} is truncated: it ends inside {what} (offset {self.offset + len(b)})")
        self.offset += n
        return b


def check_header(h: dict) -> dict:
    required = ("version", "created", "kdfAlgorithm", "kdfSalt", "kdfOpsLimit", "kdfMemLimit", "wrappedMasterKey", "photos")
    missing = [k for k in required if k not in h]
    if missing:
        raise Refused(f"the backup header lacks {', '.join(missing)}")
    if not is_int(h["version"]) or h["version"] != 1:
        raise Refused(f"unsupported backup version {h['version']!r} (this reader knows 1)")
    created = h["created"]
    if not isinstance(created, str) or not re.fullmatch(
            r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", created):
        raise Refused(f"the header's created date {created!r} is not RFC 3339")
    try:
        datetime.datetime.fromisoformat(created.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise Refused(f"the header's created date {created!r} is not a valid date") from None
    if h["kdfAlgorithm"] != "argon2id13":
        raise Refused(f"unsupported key derivation {h['kdfAlgorithm']!r} (expected argon2id13)")
    salt = b64(h["kdfSalt"], "kdfSalt")
    if len(salt) != SALT_BYTES:
        raise Refused(f"the Argon2id salt is {len(salt)} bytes, not {SALT_BYTES}")
    ops, mem = h["kdfOpsLimit"], h["kdfMemLimit"]
    if not (is_int(ops) and OPS_RANGE[0] <= ops <= OPS_RANGE[1] and is_int(mem) and MEM_RANGE[0] <= mem <= MEM_RANGE[1]):
        raise Refused(f"Argon2id limits out of bounds (ops {ops!r}, mem {mem!r}; accepted: ops {OPS_RANGE}, mem {MEM_RANGE})")
    wrapped = b64(h["wrappedMasterKey"], "wrappedMasterKey")
    if len(wrapped) != KEYWRAP_LEN:
        raise Refused(f"wrappedMasterKey is {len(wrapped)} bytes, not {KEYWRAP_LEN}")
    if not is_int(h["photos"]) or h["photos"] < 0:
        raise Refused(f"the header's photo count {h['photos']!r} is invalid")
    return {"salt": salt, "ops": ops, "mem": mem, "wrapped": wrapped, "photos": h["photos"], "created": created}


def check_path(p) -> str:
    if not isinstance(p, str):
        raise Refused("a FILE record's path is not a string")
    if p == "catalog.sqlite":
        return p
    m = PATH_RE.fullmatch(p)
    if not m or not m.group(3).startswith(m.group(2)):
        raise Refused(f"the backup names a file that does not belong in a vault: {p!r}")
    return p


def read_stream(path: str, passphrase: bytes, staging: str) -> dict:
    """Verifies the whole stream and writes its files under `staging`."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise Refused(f"cannot read {path}: {e.strerror}") from None
    with f:
        r = Reader(f, path)
        if r.f.read(8) != MAGIC:
            raise Refused(f"{path} is not a Locafoto vault backup (bad magic)")
        r.offset = 8
        (hlen,) = struct.unpack(">I", r.exact(4, "the header length"))
        if not 1 <= hlen <= MAX_HEADER:
            raise Refused(f"invalid backup header length {hlen}")
        header_bytes = r.exact(hlen, "the header")
        hdr = check_header(parse_json(header_bytes, "the backup header"))

        kek = sodium.crypto_pwhash_alg(32, passphrase, hdr["salt"], hdr["ops"], hdr["mem"], sodium.crypto_pwhash_ALG_ARGON2ID13)
        try:
            master = keywrap_open(hdr["wrapped"], kek, MASTER_KEY_AAD)
        except nacl.exceptions.CryptoError:
            raise Refused("wrong passphrase for this backup (the master key does not unwrap)") from None
        if len(master) != 32:
            raise Refused(f"the master key is {len(master)} bytes, not 32")
        stream_key = kdf_derive_from_key(master, KDF_SUBKEY_ID, KDF_CONTEXT)

        state = sodium.crypto_secretstream_xchacha20poly1305_state()
        sodium.crypto_secretstream_xchacha20poly1305_init_pull(state, r.exact(SS_HEADER, "the secretstream header"), stream_key)

        first = True
        index = 0
        current = None  # (file object, remaining, path)
        files: dict[str, int] = {}
        order: list[str] = []
        end = None
        while end is None:
            if len(b := r.f.read(4)) != 4:
                raise Refused(f"{path} is truncated: the stream ends before its final record (after {index} records)")
            r.offset += 4
            (n,) = struct.unpack(">I", b)
            if not SS_ABYTES + 1 <= n <= SS_ABYTES + MAX_PLAINTEXT:
                raise Refused(f"record {index} has an invalid length {n}")
            c = r.exact(n, f"record {index}")
            try:
                m, tag = sodium.crypto_secretstream_xchacha20poly1305_pull(state, c, header_bytes if first else None)
            except nacl.exceptions.CryptoError:
                raise Refused(f"{path} was altered or is damaged: record {index} does not authenticate") from None
            first = False
            rtype, payload = m[0], m[1:]
            if tag not in (TAG_MESSAGE, TAG_FINAL):
                raise Refused(f"record {index} carries the unexpected secretstream tag {tag}")
            if (tag == TAG_FINAL) != (rtype == REC_END):
                raise Refused(f"record {index}: only the END record may (and must) carry TAG_FINAL (type {rtype}, tag {tag})")
            if rtype == REC_FILE:
                if current is not None:
                    if current[1] != 0:
                        raise Refused(f"{current[2]} is incomplete: {current[1]} bytes missing before the next file")
                    current[0].close()
                    current = None
                e = parse_json(payload, f"FILE record {index}")
                if set(e) != {"path", "size"}:
                    raise Refused(f"FILE record {index} has fields {sorted(e)}, expected path and size")
                p = check_path(e["path"])
                if not is_int(e["size"]) or e["size"] < 0:
                    raise Refused(f"FILE record {index} has an invalid size {e['size']!r}")
                if p in files:
                    raise Refused(f"{p} appears twice in the backup")
                files[p] = e["size"]
                order.append(p)
                dest = os.path.join(staging, p)
                os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
                fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                current = (os.fdopen(fd, "wb"), e["size"], p)
            elif rtype == REC_DATA:
                if current is None:
                    raise Refused(f"DATA record {index} outside a file")
                if len(payload) > current[1]:
                    raise Refused(f"{current[2]} holds more bytes than its declared size {files[current[2]]}")
                current[0].write(payload)
                current = (current[0], current[1] - len(payload), current[2])
            elif rtype == REC_END:
                if current is not None:
                    if current[1] != 0:
                        raise Refused(f"the backup ends inside {current[2]} ({current[1]} bytes missing)")
                    current[0].close()
                    current = None
                e = parse_json(payload, "the END record")
                if set(e) != {"files"} or not is_int(e["files"]):
                    raise Refused(f"the END record is malformed: {e!r}")
                if e["files"] != len(files):
                    raise Refused(f"the END record counts {e['files']} files, the backup holds {len(files)}")
                end = e
            else:
                raise Refused(f"record {index} has an unknown type {rtype}")
            index += 1
        if r.f.read(1):
            raise Refused(f"{path} has data after the final record (offset {r.offset})")
    return {"header": hdr, "master": master, "files": files, "order": order, "records": index}


# -- the catalog and the photos -------------------------------------------------------------

def check_loca_header(data: bytes) -> tuple[int, bytes, int]:
    """The LOCA header checks a reader MUST make (formats.md "LOCA encrypted photo file");
    returns (algorithm, nonce, original size)."""
    if len(data) < LOCA_HEADER + LOCA_TAG:
        raise Refused("LOCA file shorter than header + tag")
    h = data[:LOCA_HEADER]
    if h[0:4] != LOCA_MAGIC:
        raise Refused("bad LOCA magic")
    (version,) = struct.unpack(">H", h[4:6])
    if version != 1:
        raise Refused(f"LOCA version {version}")
    alg = h[6]
    if alg not in (1, 2):
        raise Refused(f"LOCA algorithm {alg}")
    if h[7] != 0 or h[36:64] != bytes(28):
        raise Refused("LOCA reserved bytes are not zero")
    nonce = h[8:20]
    (size,) = struct.unpack(">Q", h[20:28])
    if size > LOCA_MAX:
        raise Refused(f"LOCA original size {size} exceeds 4 GiB")
    if len(data) != LOCA_HEADER + size + LOCA_TAG:
        raise Refused(f"LOCA file is {len(data)} bytes, expected {LOCA_HEADER + size + LOCA_TAG}")
    return alg, nonce, size


def read_loca(path: str, key: bytes, expected_size: int) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    alg, nonce, size = check_loca_header(data)
    if size != expected_size:
        raise Refused(f"LOCA original size {size} differs from the catalog's {expected_size}")
    aead = AESGCM(key) if alg == 1 else ChaCha20Poly1305(key)
    try:
        return aead.decrypt(nonce, data[LOCA_HEADER:], None)
    except InvalidTag:
        raise Refused("the LOCA tag does not verify") from None


def check_catalog(staging: str, stream: dict) -> list[dict]:
    files = stream["files"]
    if "catalog.sqlite" not in files:
        raise Refused("the backup holds no catalog.sqlite")
    uri = "file:" + os.path.join(staging, "catalog.sqlite") + "?mode=ro&immutable=1"
    try:
        db = sqlite3.connect(uri, uri=True)
        try:
            ok = db.execute("PRAGMA integrity_check").fetchall()
            if ok != [("ok",)]:
                raise Refused(f"the catalog fails SQLite's integrity check: {ok[:3]}")
            cols = {row[1] for row in db.execute("PRAGMA table_info(photo)")}
            private = "privateAlbumId" if "privateAlbumId" in cols else "NULL"
            sealed = "sealed" if "sealed" in cols else "NULL"
            rows = db.execute(
                f"SELECT id, name, contentHash, wrappedKey, filePath, originalSize, {private}, {sealed} FROM photo ORDER BY id").fetchall()
        finally:
            db.close()
    except sqlite3.Error as e:
        raise Refused(f"the catalog cannot be read: {e}") from None

    if len(rows) != stream["header"]["photos"]:
        raise Refused(f"the header announces {stream['header']['photos']} photos, the catalog lists {len(rows)}")
    ids = set()
    photos = []
    for pid, name, chash, wrapped, fpath, osize, album, sealed in rows:
        if not isinstance(pid, str) or not re.fullmatch(_UUID, pid):
            raise Refused(f"the catalog has a photo id that is not a lowercase UUID: {pid!r}")
        if sealed is not None:
            # A sealed catalog (v4-sealed): the describing fields are in the record; a private
            # album's record stays closed, like that photo's key.
            fields = open_photo_record(bytes(sealed), pid, stream["master"])
            if fields is not None:
                name = fields.get("name")
                try:
                    chash = bytes.fromhex(fields.get("contentHash", ""))
                except ValueError:
                    raise Refused(f"photo {pid}: the sealed record's contentHash is not hex") from None
        want = f"photos/{pid[:2]}/{pid}.loca"
        if fpath != want:
            raise Refused(f"photo {pid}: filePath {fpath!r}, expected {want!r}")
        if fpath not in files:
            raise Refused(f"photo {pid} is listed by the catalog but its file {fpath} is not in the backup")
        ids.add(pid)
        photos.append({"id": pid, "name": name, "contentHash": bytes(chash), "wrappedKey": bytes(wrapped),
                       "filePath": fpath, "originalSize": osize, "privateAlbumId": album})
    for p in files:
        m = PATH_RE.fullmatch(p)
        if m and m.group(3) not in ids:
            raise Refused(f"{p} belongs to no photo of the catalog")
        if m and m.group(1) == "thumbs":
            # formats.md does not say under which key a thumbnail is encrypted: check its LOCA
            # structure only.
            with open(os.path.join(staging, p), "rb") as f:
                try:
                    check_loca_header(f.read())
                except Refused as e:
                    raise Refused(f"thumbnail {p}: {e}") from None

    master = stream["master"]
    out = []
    for ph in photos:
        entry = {"id": ph["id"], "name": ph["name"], "contentHash": ph["contentHash"].hex(), "size": ph["originalSize"]}
        if ph["privateAlbumId"] is not None:
            entry["privateAlbum"] = ph["privateAlbumId"]
            entry["sha256"] = None
            out.append(entry)
            continue
        try:
            key = keywrap_open(ph["wrappedKey"], master, ph["id"].encode("utf-8"))
        except nacl.exceptions.CryptoError:
            raise Refused(f"photo {ph['id']}: its key does not unwrap under the master key") from None
        if len(key) != 32:
            raise Refused(f"photo {ph['id']}: its key is {len(key)} bytes")
        try:
            plain = read_loca(os.path.join(staging, ph["filePath"]), key, ph["originalSize"])
        except Refused as e:
            raise Refused(f"photo {ph['id']} ({ph['filePath']}): {e}") from None
        if hashlib.blake2b(plain, digest_size=32).digest() != ph["contentHash"]:
            raise Refused(f"photo {ph['id']}: the plaintext does not match the catalog's contentHash")
        entry["sha256"] = hashlib.sha256(plain).hexdigest()
        out.append(entry)
    return out


# -- main -----------------------------------------------------------------------------------

def place(staging: str, dest: str) -> None:
    if os.path.lexists(dest):
        if not os.path.isdir(dest) or os.path.islink(dest) or os.listdir(dest):
            raise Refused(f"{dest} exists and is not an empty folder")
        os.rmdir(dest)
    os.rename(staging, dest)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Verify (and optionally extract) a Locafoto vault backup.")
    ap.add_argument("file")
    ap.add_argument("--passphrase-file", required=True, metavar="P", help="file holding the vault passphrase")
    ap.add_argument("--extract", metavar="DIR", help="write the verified files (still encrypted as stored) to DIR")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = ap.parse_args(argv)

    if args.extract:
        dest = os.path.abspath(args.extract)
        if os.path.lexists(dest) and (not os.path.isdir(dest) or os.path.islink(dest) or os.listdir(dest)):
            sys.stderr.write(f"read_backup: error: {dest} exists and is not an empty folder\n")
            return 1
        parent = os.path.dirname(dest)
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix="." + os.path.basename(dest) + ".restoring-", dir=parent)
    else:
        dest = None
        staging = tempfile.mkdtemp(prefix="read_backup-")
    placed = False
    try:
        passphrase = read_passphrase(args.passphrase_file)
        stream = read_stream(args.file, passphrase, staging)
        photos = check_catalog(staging, stream)
        if dest:
            place(staging, dest)
            placed = True
    except Refused as e:
        sys.stderr.write(f"read_backup: error: {e}\n")
        return 1
    except OSError as e:
        sys.stderr.write(f"read_backup: error: {e}\n")
        return 1
    finally:
        if not placed:
            shutil.rmtree(staging, ignore_errors=True)

    files = stream["files"]
    if args.json:
        print(json.dumps({
            "file": args.file, "created": stream["header"]["created"], "records": stream["records"],
            "files": len(files), "bytes": sum(files.values()), "photos": photos,
            "extractedTo": dest}, indent=2))
    else:
        for p in photos:
            digest = p["sha256"] or f"(private album {p['privateAlbum']}: not decrypted)"
            print(f"{p['name'] or '(no name)'}\t{p['size']}\t{digest}")
        print(f"verified: {len(photos)} photo(s), {len(files)} file(s), {sum(files.values())} bytes, "
              f"{stream['records']} records" + (f"; extracted to {dest}" if dest else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
