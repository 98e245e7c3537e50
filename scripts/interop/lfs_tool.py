#!/usr/bin/env python3
"""lfs_tool.py - make and read .lfs files (Locafoto Shared Format, seed 001) outside Locafoto.

This is the seed's "Using External Encryption" Python example, generalised, and written
independently of the Swift code so that each checks the other:

    python3 scripts/interop/lfs_tool.py encrypt --key-hex-file KEY --name NAME IN OUT
    python3 scripts/interop/lfs_tool.py decrypt --key-hex-file KEY IN OUT
    python3 scripts/interop/lfs_tool.py name IN            # prints the key name of the header

KEY holds the shared key as 64 hex digits (what `locafoto key export NAME` prints); it is read
exactly as the seed does: bytes.fromhex(f.read().strip()). `--name-hex` gives the key name as
hex UTF-8 instead of `--name` (for names a shell or locale would mangle). IN/OUT may be `-` for
stdin/stdout. Needs the `cryptography` package (pip install cryptography).

.lfs layout: [128-byte header: key name UTF-8, NUL-padded][ciphertext][12-byte nonce][16-byte tag],
AES-256-GCM, no associated data (protocol/formats.md).
"""

import argparse
import os
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

HEADER = 128
NONCE = 12
TAG = 16


class LFSError(Exception):
    pass


def read_key(path):
    with open(path, "r") as f:
        key = bytes.fromhex(f.read().strip())
    if len(key) != 32:
        raise LFSError(f"the key must be 32 bytes (64 hex digits), got {len(key)} bytes")
    return key


def header_for(key_name):
    if not 1 <= len(key_name) <= HEADER:
        raise LFSError(f"the key name must be 1..128 bytes of UTF-8, got {len(key_name)}")
    if b"\x00" in key_name:
        raise LFSError("the key name cannot contain a NUL byte")
    key_name.decode("utf-8")  # must be valid UTF-8
    return key_name + b"\x00" * (HEADER - len(key_name))


def key_name_of(data):
    if len(data) < HEADER + NONCE + TAG:
        raise LFSError(f"truncated: {len(data)} bytes, an .lfs file has at least {HEADER + NONCE + TAG}")
    header = data[:HEADER]
    end = header.find(b"\x00")
    if end == -1:
        end = HEADER
    if end == 0:
        raise LFSError("the header names no key")
    if any(header[end:]):
        raise LFSError("bytes after the NUL that ends the key name")
    return header[:end].decode("utf-8")  # UnicodeDecodeError for invalid UTF-8


def encrypt(key, key_name, data, nonce=None):
    """The seed's example, step for step."""
    aesgcm = AESGCM(key)
    nonce = os.urandom(12) if nonce is None else nonce
    ciphertext = aesgcm.encrypt(nonce, data, None)
    # Extract tag (last 16 bytes)
    tag = ciphertext[-16:]
    encrypted_data = ciphertext[:-16]
    header = header_for(key_name)
    return header + encrypted_data + nonce + tag


def decrypt(key, data):
    key_name_of(data)
    nonce = data[-(NONCE + TAG):-TAG]
    tag = data[-TAG:]
    encrypted_data = data[HEADER:-(NONCE + TAG)]
    return AESGCM(key).decrypt(nonce, encrypted_data + tag, None)


def _read(path):
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def _write(path, data):
    if path == "-":
        sys.stdout.buffer.write(data)
        return
    with open(path, "wb") as f:
        f.write(data)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("encrypt", help="seal IN into the .lfs file OUT")
    e.add_argument("--key-hex-file", required=True)
    names = e.add_mutually_exclusive_group(required=True)
    names.add_argument("--name", help="key name (UTF-8)")
    names.add_argument("--name-hex", help="key name as hex of its UTF-8 bytes")
    e.add_argument("--nonce-hex", help=argparse.SUPPRESS)  # test vectors only: never reuse a nonce
    e.add_argument("input")
    e.add_argument("output")
    d = sub.add_parser("decrypt", help="open the .lfs file IN into OUT")
    d.add_argument("--key-hex-file", required=True)
    d.add_argument("input")
    d.add_argument("output")
    n = sub.add_parser("name", help="print the key name in the header of IN")
    n.add_argument("input")
    args = p.parse_args(argv)

    try:
        if args.command == "encrypt":
            key_name = bytes.fromhex(args.name_hex) if args.name_hex is not None else os.fsencode(args.name)
            nonce = bytes.fromhex(args.nonce_hex) if args.nonce_hex else None
            _write(args.output, encrypt(read_key(args.key_hex_file), key_name, _read(args.input), nonce))
        elif args.command == "decrypt":
            _write(args.output, decrypt(read_key(args.key_hex_file), _read(args.input)))
        else:
            print(key_name_of(_read(args.input)))
    except InvalidTag:
        print("lfs_tool: authentication failed: wrong key, or the file was altered", file=sys.stderr)
        return 1
    except (LFSError, UnicodeDecodeError, ValueError, OSError) as err:
        print(f"lfs_tool: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
