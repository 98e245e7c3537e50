"""The .lfs format (seed 001) from the Python side: scripts/interop/lfs_tool.py and the seed's
own example against the committed vectors (protocol/vectors/lfs.json, which the Swift codec
also reads). The Swift <-> Python round trips through a real vault run in the Swift suite
(Tests/LocafotoVaultTests/LFSVaultTests.swift drives lfs_tool.py); agent-level tests belong
with the `locafoto key …` and `.lfs` import/export commands once those exist.

No agent is started here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "scripts" / "interop" / "lfs_tool.py"
GEN = REPO / "scripts" / "gen-vectors-lfs.py"
VECTORS = json.loads((REPO / "protocol" / "vectors" / "lfs.json").read_text(encoding="utf-8"))

sys.path.insert(0, str(TOOL.parent))
import lfs_tool  # noqa: E402

from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402


def run_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, timeout=60)


def seed_example(key_hex_file: Path, data: bytes, key_name: bytes) -> bytes:
    """The seed's Python example, verbatim apart from taking its inputs as arguments."""
    with open(key_hex_file, "r") as f:
        key = bytes.fromhex(f.read().strip())
    aesgcm = AESGCM(key)
    nonce = os.urandom(12)
    ciphertext = aesgcm.encrypt(nonce, data, None)
    tag = ciphertext[-16:]
    encrypted_data = ciphertext[:-16]
    header = key_name + b"\x00" * (128 - len(key_name))
    return header + encrypted_data + nonce + tag


def test_vectors_are_up_to_date():
    p = subprocess.run([sys.executable, str(GEN), "--check"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("v", VECTORS["valid"], ids=lambda v: v["name"])
def test_valid_vectors(v, tmp_path):
    key = bytes.fromhex(v["key"])
    file = bytes.fromhex(v["file"])
    plaintext = bytes.fromhex(v["plaintext"])
    assert lfs_tool.key_name_of(file) == v["keyName"]
    assert lfs_tool.decrypt(key, file) == plaintext
    assert lfs_tool.encrypt(key, bytes.fromhex(v["keyNameHex"]), plaintext, bytes.fromhex(v["nonce"])) == file
    assert len(file) == 156 + len(plaintext)

    # Through the command line, as a user would run it.
    (tmp_path / "key.txt").write_text(v["key"] + "\n")
    (tmp_path / "in.lfs").write_bytes(file)
    p = run_tool("decrypt", "--key-hex-file", str(tmp_path / "key.txt"), str(tmp_path / "in.lfs"), str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out").read_bytes() == plaintext
    p = run_tool("name", str(tmp_path / "in.lfs"))
    assert p.returncode == 0 and p.stdout.decode("utf-8").rstrip("\n") == v["keyName"]


@pytest.mark.parametrize("v", VECTORS["invalid"], ids=lambda v: v["name"])
def test_invalid_vectors_are_refused(v, tmp_path):
    (tmp_path / "key.txt").write_text(v["key"])
    (tmp_path / "in.lfs").write_bytes(bytes.fromhex(v["file"]))
    p = run_tool("decrypt", "--key-hex-file", str(tmp_path / "key.txt"), str(tmp_path / "in.lfs"), str(tmp_path / "out"))
    assert p.returncode != 0
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "name",
    ["my-documents", "k" * 128, "\U0001F511" * 32, "фото-ключ 🔑", "with space"],
)
@pytest.mark.parametrize("size", [0, 1, 1000, 1 << 20])
def test_tool_matches_the_seed_example(name, size, tmp_path):
    key = os.urandom(32)
    (tmp_path / "key.txt").write_text(key.hex() + "\n")
    data = os.urandom(size)
    (tmp_path / "plain").write_bytes(data)

    # The seed's example writes; the tool reads.
    seeded = seed_example(tmp_path / "key.txt", data, name.encode("utf-8"))
    (tmp_path / "seed.lfs").write_bytes(seeded)
    p = run_tool("decrypt", "--key-hex-file", str(tmp_path / "key.txt"), str(tmp_path / "seed.lfs"), str(tmp_path / "a"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "a").read_bytes() == data

    # The tool writes (name given as text and as hex); plain AES-GCM reads.
    for flag, value in (("--name", name), ("--name-hex", name.encode("utf-8").hex())):
        out = tmp_path / "tool.lfs"
        p = run_tool("encrypt", "--key-hex-file", str(tmp_path / "key.txt"), flag, value, str(tmp_path / "plain"), str(out))
        assert p.returncode == 0, p.stderr
        lfs = out.read_bytes()
        assert len(lfs) == 156 + size
        assert lfs[:128] == name.encode("utf-8") + b"\x00" * (128 - len(name.encode("utf-8")))
        assert AESGCM(key).decrypt(lfs[-28:-16], lfs[128:-28] + lfs[-16:], None) == data
        out.unlink()


def test_tool_refuses_bad_input(tmp_path):
    key = os.urandom(32)
    (tmp_path / "key.txt").write_text(key.hex())
    (tmp_path / "short.txt").write_text(key.hex()[:-2])
    (tmp_path / "plain").write_bytes(b"x")
    for args in (
        ["--name", "k" * 129],
        ["--name-hex", "6100" + "62"],
        ["--name-hex", "ff"],
        ["--name", ""],
    ):
        p = run_tool("encrypt", "--key-hex-file", str(tmp_path / "key.txt"), *args, str(tmp_path / "plain"), str(tmp_path / "o"))
        assert p.returncode != 0, args
    p = run_tool("encrypt", "--key-hex-file", str(tmp_path / "short.txt"), "--name", "k", str(tmp_path / "plain"), str(tmp_path / "o"))
    assert p.returncode != 0 and b"32 bytes" in p.stderr
