"""`locafoto capture` (seed 003): a frame from a V4L2 camera through ffmpeg, piped into the vault.

No camera can be tested here: a virtual one needs the v4l2loopback kernel module, which a
container (and CI) cannot load, so these tests cover what can run: no camera at the device, a
device this user may not open (as an unprivileged user, the only way root is refused), a file
that is not a device, and the pipeline itself with a stand-in for ffmpeg (LOCAFOTO_FFMPEG) that
runs the real ffmpeg on its test pattern instead of a camera: its JPEG goes through the agent's
streaming import and the classify hook like a camera's would."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import lfharness as h

NOBODY = 65534


def test_no_camera_says_so(make_node, workdir):
    a = make_node("a")
    r = a.run("capture", "--device", str(workdir / "video9"), json=False, check=False)
    assert r.returncode == 66, r.output
    assert f"no camera at {workdir}/video9" in r.output and "--device" in r.output, r.output
    assert a.photos() == []


def test_not_a_device(make_node, workdir):
    a = make_node("a")
    plain = workdir / "video0"
    plain.write_bytes(b"not a camera")
    r = a.run("capture", "--device", str(plain), json=False, check=False)
    assert r.returncode == 64 and "is not a camera" in r.output, r.output


def test_no_permission_says_what_to_do(workdir):
    """As nobody: a device node it may not open. Root may open anything, hence setpriv."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run the CLI as an unprivileged user")
    cam = workdir / "video0"
    cam.write_bytes(b"")
    os.chmod(cam, 0o600)  # root's: nobody can neither read nor write it
    os.chmod(workdir, 0o755)
    binary = Path(tempfile.mkdtemp(prefix="lfcap", dir="/tmp")) / "locafoto"
    try:
        shutil.copy2(h.BIN, binary)
        os.chmod(binary.parent, 0o755)
        r = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", str(binary),
                            "capture", "--device", str(cam), "--home", "/tmp"],
                           capture_output=True, text=True, env=h.clean_env(), timeout=h.CLI_TIMEOUT)
    finally:
        shutil.rmtree(binary.parent, ignore_errors=True)
    assert r.returncode == 77, r.stdout + r.stderr
    assert "no permission to use the camera" in r.stderr and "video" in r.stderr and "usermod" in r.stderr, r.stderr


def test_capture_pipes_a_frame_into_the_vault_through_the_hook(make_node, workdir):
    if shutil.which("ffmpeg") is None:
        pytest.fail("ffmpeg is not installed: run scripts/setup.sh", pytrace=False)
    hook = workdir / "hook.sh"
    hook.write_text('#!/bin/sh\ncat >/dev/null\necho "tag:camera"\n')
    hook.chmod(0o755)
    a = make_node("a", start=False)
    a.start("--classify-hook", str(hook))
    # The stand-in takes the real ffmpeg's arguments for a camera and swaps the input for the
    # test pattern: everything after the input (one frame, MJPEG to stdout) is the command's own.
    fake = workdir / "ffmpeg"
    fake.write_text('#!/bin/sh\nwhile [ "$1" != "-i" ]; do shift; done\nshift 2\n'
                    'exec ffmpeg -hide_banner -loglevel error -f lavfi -i testsrc=size=320x240 "$@"\n')
    fake.chmod(0o755)
    cam = Path("/dev/null")  # a character device this user may open; the stand-in never reads it
    env_cmd = a.cmd("capture", "--device", str(cam), "--name", "shot.jpg")
    p = subprocess.run(env_cmd, capture_output=True, text=True, env={**h.clean_env(), "LOCAFOTO_FFMPEG": str(fake)},
                       timeout=h.CLI_TIMEOUT)
    assert p.returncode == 0, p.stdout + p.stderr
    import json
    shot = json.loads(p.stdout)
    assert shot["format"] == "jpeg" and shot["name"] == "shot.jpg" and shot["tags"] == ["camera"], shot
    assert h.files_in(a.home / "vault" / "tmp") == []

    # ffmpeg failing (here: the real one on /dev/null, which is no camera) is said as such.
    r = a.run("capture", "--device", str(cam), json=False, check=False)
    assert r.returncode == 74 and "ffmpeg could not take a photo from /dev/null" in r.output, r.output
    assert [x["id"] for x in a.photos()] == [shot["id"]]
