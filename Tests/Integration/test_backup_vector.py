"""The vault backup vector (protocol/vectors/backup-v1.locabak, made by scripts/gen-vector-backup.sh)
read by the independent Python reader scripts/interop/read_backup.py, written from
protocol/formats.md alone. Needs PyNaCl and cryptography (scripts/setup.sh installs them); no agent.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
READER = REPO / "scripts" / "interop" / "read_backup.py"
VECTOR = REPO / "protocol" / "vectors" / "backup-v1.locabak"
META = json.loads((REPO / "protocol" / "vectors" / "backup-v1.json").read_text())


def read_backup(path: Path, passfile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(READER), str(path), "--passphrase-file", str(passfile), *extra],
                          capture_output=True, text=True, timeout=120)


def refused(p: subprocess.CompletedProcess, *words: str) -> None:
    assert p.returncode == 1, f"expected the reader to refuse (status 1), got {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert p.stderr.startswith("read_backup: error: "), p.stderr
    low = p.stderr.lower()
    assert any(w in low for w in words), f"expected one of {words} in: {p.stderr}"
    assert p.stdout == "", p.stdout


def record_offsets(blob: bytes) -> list[tuple[int, int]]:
    """(start, end) of each record (length prefix included), from the plaintext framing."""
    (h,) = struct.unpack(">I", blob[8:12])
    off = 12 + h + 24
    out = []
    while off < len(blob):
        (n,) = struct.unpack(">I", blob[off:off + 4])
        out.append((off, off + 4 + n))
        off += 4 + n
    assert off == len(blob)
    return out


@pytest.fixture
def passfile(tmp_path: Path) -> Path:
    p = tmp_path / "pass"
    p.write_text(META["passphrase"] + "\n")
    os.chmod(p, 0o600)
    return p


@pytest.fixture(scope="module")
def blob() -> bytes:
    return VECTOR.read_bytes()


def test_vector_file_is_the_described_one(blob):
    assert len(blob) == META["fileSize"]
    assert hashlib.sha256(blob).hexdigest() == META["fileSha256"]


def test_reader_verifies_the_vector_and_its_photos(passfile, tmp_path):
    dest = tmp_path / "out"
    p = read_backup(VECTOR, passfile, "--extract", str(dest), "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["files"] == META["files"]
    assert len(r["photos"]) == META["photoCount"]
    got = {ph["name"]: ph for ph in r["photos"]}
    assert sorted(got) == sorted(ph["name"] for ph in META["photos"])
    for want in META["photos"]:
        ph = got[want["name"]]
        assert ph["contentHash"] == want["contentHash"]
        assert ph["sha256"] == want["sha256"]
        assert ph["size"] == want["size"]
        # The JSON describes the fixtures the vector was made from.
        data = (REPO / want["fixture"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == want["sha256"]
        assert hashlib.blake2b(data, digest_size=32).hexdigest() == want["contentHash"]
        assert (dest / "photos" / ph["id"][:2] / f"{ph['id']}.loca").is_file()
    assert (dest / "catalog.sqlite").is_file()
    assert not [x for x in tmp_path.iterdir() if ".restoring-" in x.name], "staging folder left behind"

    # The text output: name, size, SHA-256 per photo.
    t = read_backup(VECTOR, passfile)
    assert t.returncode == 0, t.stderr
    lines = sorted(t.stdout.strip().splitlines())
    assert lines == sorted(f"{w['name']}\t{w['size']}\t{w['sha256']}" for w in META["photos"])


def test_wrong_passphrase_is_refused(tmp_path):
    wrong = tmp_path / "wrong"
    wrong.write_text(META["passphrase"] + "!\n")
    dest = tmp_path / "out"
    refused(read_backup(VECTOR, wrong, "--extract", str(dest)), "wrong passphrase")
    assert not dest.exists()


def _flips(blob: bytes) -> dict[str, int]:
    """Byte offsets to flip, one per part of the file."""
    (h,) = struct.unpack(">I", blob[8:12])
    header = blob[12:12 + h]
    created = header.index(b'"created"')
    recs = record_offsets(blob)
    mid_start, mid_end = recs[len(recs) // 2]
    return {
        "magic": 3,
        "header length": 11,
        # A digit of the created date: the JSON stays valid, but it is the first record's AD.
        "header json": 12 + created + len(b'"created":"') + 3,
        "secretstream header": 12 + h + 5,
        "first record length": recs[0][0] + 3,
        "first record": recs[0][0] + 4 + 10,
        "middle record": (mid_start + mid_end) // 2,
        "final record tag": len(blob) - 1,
    }


@pytest.mark.parametrize("where", ["magic", "header length", "header json", "secretstream header",
                                   "first record length", "first record", "middle record", "final record tag"])
def test_a_flipped_byte_is_refused(blob, passfile, tmp_path, where):
    off = _flips(blob)[where]
    bad = bytearray(blob)
    bad[off] ^= 0x01
    f = tmp_path / "flipped.locabak"
    f.write_bytes(bytes(bad))
    dest = tmp_path / "out"
    refused(read_backup(f, passfile, "--extract", str(dest)),
            "altered", "authenticate", "not a locafoto", "invalid", "truncated", "wrong passphrase", "json")
    assert not dest.exists()


@pytest.mark.parametrize("where", ["inside header", "before first record", "mid record", "record boundary",
                                   "before final record", "last byte"])
def test_a_truncated_copy_is_refused(blob, passfile, tmp_path, where):
    recs = record_offsets(blob)
    (h,) = struct.unpack(">I", blob[8:12])
    cut = {
        "inside header": 12 + h // 2,
        "before first record": recs[0][0],
        "mid record": (recs[1][0] + recs[1][1]) // 2,
        "record boundary": recs[len(recs) // 2][0],
        "before final record": recs[-1][0],
        "last byte": len(blob) - 1,
    }[where]
    f = tmp_path / "truncated.locabak"
    f.write_bytes(blob[:cut])
    dest = tmp_path / "out"
    refused(read_backup(f, passfile, "--extract", str(dest)), "truncated")
    assert not dest.exists()


def test_trailing_data_is_refused(blob, passfile, tmp_path):
    f = tmp_path / "trailing.locabak"
    f.write_bytes(blob + b"\x00")
    refused(read_backup(f, passfile), "after the final record")


def test_records_cannot_be_dropped_or_swapped(blob, passfile, tmp_path):
    recs = record_offsets(blob)
    head = blob[:recs[0][0]]
    parts = [blob[a:b] for a, b in recs]
    dropped = tmp_path / "dropped.locabak"
    dropped.write_bytes(head + b"".join(parts[:2] + parts[3:]))
    refused(read_backup(dropped, passfile), "altered", "authenticate")
    swapped = tmp_path / "swapped.locabak"
    swapped.write_bytes(head + b"".join([parts[0], parts[2], parts[1]] + parts[3:]))
    refused(read_backup(swapped, passfile), "altered", "authenticate")


# -- re-encrypted variants: what only a key holder (a buggy or hostile writer) could produce ----

sys.path.insert(0, str(READER.parent))
import read_backup as rb  # noqa: E402
import nacl.bindings as sodium  # noqa: E402

FILE, DATA, END = 1, 2, 3
MSG, FINAL = sodium.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE, sodium.crypto_secretstream_xchacha20poly1305_TAG_FINAL


@pytest.fixture(scope="module")
def opened(blob):
    """(header bytes, stream key, [(type, payload, tag)]) of the vector, decrypted here."""
    (h,) = struct.unpack(">I", blob[8:12])
    header = blob[12:12 + h]
    hdr = rb.check_header(json.loads(header))
    kek = sodium.crypto_pwhash_alg(32, META["passphrase"].encode(), hdr["salt"], hdr["ops"], hdr["mem"],
                                   sodium.crypto_pwhash_ALG_ARGON2ID13)
    key = rb.kdf_derive_from_key(rb.keywrap_open(hdr["wrapped"], kek, rb.MASTER_KEY_AAD), 1, b"LOCABAK1")
    st = sodium.crypto_secretstream_xchacha20poly1305_state()
    sodium.crypto_secretstream_xchacha20poly1305_init_pull(st, blob[12 + h:12 + h + 24], key)
    records = []
    for i, (a, b) in enumerate(record_offsets(blob)):
        m, tag = sodium.crypto_secretstream_xchacha20poly1305_pull(st, blob[a + 4:b], header if i == 0 else None)
        records.append((m[0], m[1:], tag))
    return header, key, records


def reseal(header: bytes, key: bytes, records) -> bytes:
    st = sodium.crypto_secretstream_xchacha20poly1305_state()
    out = [b"LOCABAK\x00", struct.pack(">I", len(header)), header, sodium.crypto_secretstream_xchacha20poly1305_init_push(st, key)]
    for i, (t, payload, tag) in enumerate(records):
        c = sodium.crypto_secretstream_xchacha20poly1305_push(st, bytes([t]) + payload, header if i == 0 else None, tag)
        out += [struct.pack(">I", len(c)), c]
    return b"".join(out)


def file_json(path: str, size: int) -> bytes:
    return json.dumps({"path": path, "size": size}).encode()


def test_resealed_unchanged_stream_still_verifies(opened, passfile, tmp_path):
    f = tmp_path / "same.locabak"
    f.write_bytes(reseal(*opened))
    p = read_backup(f, passfile)
    assert p.returncode == 0, p.stderr


def _variants(records):
    files = [i for i, r in enumerate(records) if r[0] == FILE]
    photo = next(i for i in files if json.loads(records[i][1])["path"].startswith("photos/"))
    photo_path = json.loads(records[photo][1])["path"]
    nxt = next(i for i in files + [len(records) - 1] if i > photo)  # the record after the photo's data
    data_idx = next(i for i, r in enumerate(records) if r[0] == DATA)
    end_p = records[-1][1]

    def with_file(path: str) -> list:
        return records[:-1] + [(FILE, file_json(path, 1), MSG), (DATA, b"x", MSG), (END, json.dumps({"files": len(files) + 1}).encode(), FINAL)]

    return {
        "parent path": (with_file("../catalog.sqlite"), "does not belong"),
        "absolute path": (with_file("/etc/passwd"), "does not belong"),
        "upper-case hex": (with_file(photo_path.upper().replace("PHOTOS/", "photos/").replace(".LOCA", ".loca")), "does not belong"),
        "prefix mismatch": (with_file("photos/00/" + photo_path.split("/")[2]), "does not belong"),
        "unknown top folder": (with_file("tmp/" + "/".join(photo_path.split("/")[1:])), "does not belong"),
        "duplicate file": (records[:-1] + [records[photo], (DATA, b"x", MSG), (END, end_p, FINAL)], "twice"),
        "final tag on data": (records[:data_idx] + [(DATA, records[data_idx][1], FINAL)], "tag_final"),
        # No END; TAG_FINAL on the last DATA record, 100 bytes short of its file's declared size.
        "final tag on short last data": (records[:-2] + [(DATA, records[-2][1][:-100], FINAL)], "tag_final"),
        "end without final tag": (records[:-1] + [(END, end_p, MSG)], "tag_final"),
        "record after final": (records + [(DATA, b"x", MSG)], "after the final record"),
        "unknown record type": (records[:-1] + [(9, b"", MSG), records[-1]], "unknown type"),
        "wrong end count": (records[:-1] + [(END, json.dumps({"files": len(files) + 1}).encode(), FINAL)], "counts"),
        "data beyond size": (records[:-1] + [(DATA, b"x", MSG), records[-1]], "more bytes"),
        "data outside a file": ([(DATA, b"x", MSG)] + records, "outside a file"),
        "short file": (records[:nxt - 1] + [(records[nxt - 1][0], records[nxt - 1][1][:-1], MSG)] + records[nxt:], "missing"),
        "photo file dropped": (records[:photo] + records[nxt:-1] + [(END, json.dumps({"files": len(files) - 1}).encode(), FINAL)], "not in the backup"),
        "no catalog": ([(END, json.dumps({"files": 0}).encode(), FINAL)], "no catalog"),
    }


@pytest.mark.parametrize("case", ["parent path", "absolute path", "upper-case hex", "prefix mismatch", "unknown top folder",
                                  "duplicate file", "final tag on data", "final tag on short last data", "end without final tag", "record after final",
                                  "unknown record type", "wrong end count", "data beyond size", "data outside a file",
                                  "short file", "photo file dropped", "no catalog"])
def test_a_resealed_malformed_stream_is_refused(opened, passfile, tmp_path, case):
    header, key, records = opened
    recs, words = _variants(records)[case]
    f = tmp_path / "bad.locabak"
    f.write_bytes(reseal(header, key, recs))
    dest = tmp_path / "out"
    refused(read_backup(f, passfile, "--extract", str(dest)), words)
    assert not dest.exists()


def test_a_resealed_header_with_another_photo_count_is_refused(opened, passfile, tmp_path):
    header, key, records = opened
    h = json.loads(header)
    h["photos"] += 1
    f = tmp_path / "count.locabak"
    f.write_bytes(reseal(json.dumps(h).encode(), key, records))
    refused(read_backup(f, passfile), "announces")
