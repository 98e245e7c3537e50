"""LocalSend (issues 27 and 42) against a third implementation we did not write: `localsend` 0.1.2 from
PyPI (a LocalSend v2.1 library: httpx client, pydantic DTOs, an RSA certificate of its own but
none shown when it sends), as a SENDER to a node. It needs Python 3.12+, so it lives in its own
venv (scripts/setup.sh makes /opt/locafoto-test/localsend-0.1.2; LOCALSEND_PYPI_PYTHON overrides).

How it is driven: its `localsend send` command sends only to a device it hears of (a multicast
announcement or a /register, on LocalSend's port 53317), and its app binds 0.0.0.0:53317 and
multicasts on the default route's interface. So the tests use the package's own sending code
without that: a small driver (DRIVER below, run by the venv's python) builds the package's
`info.Context` (its certificate's fingerprint, from its state under the test's directory) and
its `upload.Uploader`, and calls `Uploader.upload(files, device)` with the node's address, port
and fingerprint. That is the package's whole send: `GET /api/localsend/v1/info` (it checks the
fingerprint), `POST prepare-upload`, the uploads in parallel (chunked bodies), and `cancel` when
an upload fails. No server, no multicast socket: only HTTPS to 127.0.0.1.

The package's httpx client has httpx's default 5 s timeout, which a prepare-upload waiting for
the user outlasts: the driver keeps it as shipped where the test is about that (the sender gives
up, the node withdraws the offer), and gives a longer one (a hang guard) where the test accepts
the offer, so that the accept is not a race against 5 s on a busy machine.

The driver reports on stdout, one JSON line per request (`"event": "call"`) and at the end
(`"event": "done"` or `"error"`). Waits follow those, the process's exit and the node's inbox;
nothing sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import lfharness as h
from test_localsend import HEIC, JPEG, node_with_localsend

PYTHON = os.environ.get("LOCALSEND_PYPI_PYTHON", "/opt/locafoto-test/localsend-0.1.2/bin/python")

DRIVER = r'''
import asyncio, json, pathlib, sys, traceback

import aiofiles, httpx, pydantic
import localsend
from localsend import info, upload
from localsend.lib import dto, protocol, ssl

port, fingerprint, timeout, alias, *paths = sys.argv[1:]


def say(**event):
    print("LSPYPI " + json.dumps(event), flush=True)


class Client(protocol.Client):
    """The package's client, unchanged, saying what each call got."""

    async def _said(self, name, call):
        try:
            result = await call
        except localsend.lib.protocol.client.InvalidCall as e:
            say(event="call", call=name, status=e.status_code, text=e.text)
            raise
        except Exception as e:
            say(event="call", call=name, error=type(e).__name__, detail=str(e))
            raise
        say(event="call", call=name, status=200)
        return result

    def call_info_v1(self, device):
        return self._said("info_v1", super().call_info_v1(device))

    def call_prepare_upload(self, device, body):
        return self._said("prepare_upload", super().call_prepare_upload(device, body))

    def call_upload(self, device, params, body):
        return self._said("upload", super().call_upload(device, params, body))

    def call_cancel(self, device, params):
        return self._said("cancel", super().call_cancel(device, params))


async def main():
    config = localsend.Config(info=info.Config(alias=alias))
    info_ctx = info.Context.create(config.info, ssl.Context.create(config.ssl))
    say(event="self", fingerprint=info_ctx.fingerprint, alias=info_ctx.alias)
    device = protocol.Device(host="127.0.0.1", info=dto.DeviceInfo(
        alias="locafoto", version="2.1", fingerprint=fingerprint, deviceModel=None, deviceType=None,
        port=int(port), protocol=dto.DeviceProtocol.HTTPS))
    files = [localsend.File(p.name, pydantic.ByteSize(p.stat().st_size), input=lambda p=p: aiofiles.open(p, "rb"))
             for p in map(pathlib.Path, paths)]
    if timeout == "shipped":  # as the package makes it: httpx's default timeout (5 s)
        async with upload.Uploader.create(config.upload, info_ctx) as uploader:
            uploader.client = Client(uploader.client.http_client)
            await uploader.upload(files, device)
    else:
        async with httpx.AsyncClient(verify=False, timeout=float(timeout)) as http_client:
            await upload.Uploader(config.upload, info_ctx, Client(http_client)).upload(files, device)


try:
    asyncio.run(main())
except Exception as e:
    say(event="error", error=type(e).__name__, detail=str(e), trace=traceback.format_exc())
    sys.exit(1)
say(event="done")
'''


class PyPISender:
    """One run of the driver: `localsend` 0.1.2 sending `files` to the node at 127.0.0.1:port."""

    runs = 0

    def __init__(self, root: Path, port: int, fingerprint: str, *files: Path, timeout: str = "120",
                 alias: str = "PyPI localsend") -> None:
        assert os.access(PYTHON, os.X_OK), f"{PYTHON} is missing: scripts/setup.sh makes its venv (localsend==0.1.2)"
        env = {k: v for k, v in h.clean_env().items() if not k.startswith(("XDG_", "LOCALSEND"))}
        # Its state (an RSA key, its certificate, an alias) under the test's directory; the same
        # for every run of a test, as one device's would be.
        env.update(XDG_STATE_HOME=str(root / "lspypi" / "state"), XDG_CACHE_HOME=str(root / "lspypi" / "cache"),
                   XDG_CONFIG_HOME=str(root / "lspypi" / "config"), XDG_RUNTIME_DIR=str(root / "lspypi" / "run"))
        self.proc = subprocess.Popen([PYTHON, "-c", DRIVER, str(port), fingerprint, timeout, alias, *map(str, files)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env, start_new_session=True)
        PyPISender.runs += 1
        self.log = root / f"lspypi-{PyPISender.runs}.log"  # its output, once it has ended
        self.events: list[dict] = []
        self.output = ""

    def finish(self, timeout: float = 120) -> list[dict]:
        """Waits for the driver to exit (timeout: a hang guard); its events."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            h.terminate(self.proc, timeout=5)
            out, err = self.proc.communicate()
            raise AssertionError(f"the localsend 0.1.2 driver did not finish within {timeout:.0f}s\n{out}\n{err}")
        self.output = f"exit status {self.proc.returncode}\nstdout:\n{out}\nstderr:\n{err}"
        self.log.write_text(self.output)
        self.events = [json.loads(line[7:]) for line in out.splitlines() if line.startswith("LSPYPI ")]
        return self.events

    def calls(self) -> list[tuple]:
        return [(e["call"], e.get("status") or e.get("error")) for e in self.events if e["event"] == "call"]

    def end(self) -> dict:
        return self.events[-1] if self.events else {"event": "none"}

    def fingerprint(self) -> str:
        return next(e["fingerprint"] for e in self.events if e["event"] == "self")

    def stop(self) -> None:
        h.terminate(self.proc, timeout=5)

    def offer_in(self, node: h.Node) -> dict:
        """The offer in `node`'s inbox, waiting for it or for this sender to end first (a refusal
        or an error then fails the test with what each request got, not with a timeout)."""
        got = h.wait_for(lambda: self.proc.poll() is not None or node.inbox(), what=f"an offer in {node.key}'s inbox")
        if got is True:
            self.finish()
            raise AssertionError(f"localsend 0.1.2 ended before its offer showed: {self.calls()}\n{self.output}")
        return node.wait_offer(previews=False)


@pytest.fixture
def pypi_sender(workdir):
    started: list[PyPISender] = []

    def make(*args, **kw) -> PyPISender:
        s = PyPISender(workdir, *args, **kw)
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


def test_localsend_pypi_sends_jpeg_and_heic_to_the_node(make_node, pypi_sender, workdir):
    b, port = node_with_localsend(make_node)
    node_fp = b.run("localsend")["fingerprint"]
    s = pypi_sender(port, node_fp, JPEG, HEIC)
    offer = s.offer_in(b)
    # No client certificate: unverified, never trusted, so its offer waits for the user.
    assert offer["sender"]["fingerprint"].startswith("localsend:unverified:"), offer["sender"]
    assert offer["sender"]["name"] == "PyPI localsend", offer["sender"]
    assert offer["sender"]["trusted"] is False
    assert sorted(i["name"] for i in offer["items"]) == ["photo.heic", "photo.jpg"], offer["items"]
    b.run("accept", offer["id"][:8])
    events = s.finish()
    assert s.end()["event"] == "done", s.output
    # It asked the v1 info first (it checks the fingerprint there), then offered, then uploaded
    # both; no cancel (the package cancels when an upload fails, and says nothing else of it).
    assert s.calls() == [("info_v1", 200), ("prepare_upload", 200), ("upload", 200), ("upload", 200)], s.output
    assert offer["sender"]["fingerprint"] == "localsend:unverified:" + s.fingerprint(), (offer["sender"], events)
    assert b.ended_offer(offer["id"])["state"] == "completed"
    h.assert_holds_exactly(b, [JPEG, HEIC], workdir)
    # Nothing is recorded of a device without a certificate.
    assert b.run("localsend")["devices"] == []


def test_a_sender_that_times_out_withdraws_its_offer_and_the_next_send_works(make_node, pypi_sender, workdir):
    b, port = node_with_localsend(make_node)
    node_fp = b.run("localsend")["fingerprint"]
    # As shipped: httpx's 5 s timeout on the prepare-upload, which nobody answers here. The
    # test waits for the sender to give up (its exit), not for the offer to show: however slow
    # the machine, there is no race with those 5 s.
    s = pypi_sender(port, node_fp, JPEG, timeout="shipped")
    s.finish()
    assert s.end()["event"] == "error" and s.end()["error"] == "ReadTimeout", s.output
    assert s.calls() == [("info_v1", 200), ("prepare_upload", "ReadTimeout")], s.output
    # Its offer had waited in the inbox; its connection closed, the node withdrew it.
    done = h.wait_for(lambda: next((o for o in b.inbox(all=True) if o["state"] not in ("pending", "accepted")), None),
                      what="the timed-out sender's offer to end")
    assert done["sender"]["fingerprint"] == "localsend:unverified:" + s.fingerprint(), done
    assert done["state"] == "cancelled", done
    assert "stopped waiting for an answer" in (done.get("message") or ""), done
    assert [o["id"] for o in b.inbox(all=True)] == [done["id"]]
    assert b.photos() == []
    # The session is over: the same device's next send is offered (not refused with 409) and,
    # accepted, arrives.
    again = pypi_sender(port, node_fp, JPEG, HEIC)
    second = again.offer_in(b)
    assert second["id"] != done["id"]
    b.run("accept", second["id"][:8])
    again.finish()
    assert again.end()["event"] == "done", again.output
    assert again.calls() == [("info_v1", 200), ("prepare_upload", 200), ("upload", 200), ("upload", 200)], again.output
    assert b.ended_offer(second["id"])["state"] == "completed"
    h.assert_holds_exactly(b, [JPEG, HEIC], workdir)
