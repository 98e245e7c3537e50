"""Helpers for the multi-host suite (test_lan.py): real agents on a virtual LAN of network
namespaces built by scripts/lan.sh, each host with its own D-Bus + avahi-daemon.

Every command for a host (agent and CLI calls alike) runs as

    env LAN_NAME=<lan> LAN_STATE=<state> scripts/lan.sh exec <host> locafoto … --home <dir>/<host>

so the command line in a failure message can be pasted into a shell while the LAN is up. The
node homes are ordinary directories under /tmp, visible from every namespace (only /run/dbus
and /run/avahi-daemon differ per host); the control socket is a Unix path, so the tests could
also talk to it from the root namespace, but they stay inside the host for realism.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import lfharness as h

LAN_SH = h.REPO / "scripts" / "lan.sh"
AGENT_PORT = 47820


class LanError(AssertionError):
    pass


class Lan:
    """One LAN of scripts/lan.sh, addressed by its LAN_NAME (namespaces `<name>-<host>`)."""

    def __init__(self, name: str, hosts: list[str], subnet: str = "10.77.0.0/24", state: str | None = None):
        self.name = name
        self.hosts = list(hosts)
        self.subnet = subnet
        self.state = state or os.environ.get("LAN_STATE") or "/run/locafoto-lan"
        self.is_up = False

    # -- lan.sh ----------------------------------------------------------------------------
    def env_args(self) -> list[str]:
        return [f"LAN_NAME={self.name}", f"LAN_STATE={self.state}"]

    def _env(self) -> dict[str, str]:
        env = h.clean_env()
        env.update(LAN_NAME=self.name, LAN_STATE=self.state, LAN_SUBNET=self.subnet,
                   LAN_HOSTS=" ".join(self.hosts), LAN_OWNER_PID=str(os.getpid()))
        return env

    def sh(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        cmd = [str(LAN_SH), *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=self._env(),
                           stdin=subprocess.DEVNULL)
        if check and p.returncode != 0:
            raise LanError(f"`{' '.join(cmd)}` (LAN_NAME={self.name}) failed with status {p.returncode}\n"
                           f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p

    def up(self) -> str:
        out = self.sh("up", timeout=60).stdout
        self.is_up = True
        return out

    def down(self) -> subprocess.CompletedProcess:
        p = self.sh("down", check=False, timeout=60)
        self.is_up = False
        return p

    def gc(self) -> None:
        """Removes LANs left behind by test runs whose process is gone (e.g. killed pytest)."""
        self.sh("gc", check=False)

    def status(self) -> str:
        p = self.sh("status", check=False)
        return p.stdout + p.stderr

    def namespaces(self) -> list[str]:
        out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        names = [line.split()[0] for line in out.splitlines() if line.strip()]
        return [n for n in names if n == f"{self.name}-sw" or any(n == f"{self.name}-{x}" for x in self.hosts)]

    def exec_prefix(self, host: str) -> list[str]:
        """argv prefix that runs the rest inside `host`."""
        return ["env", *self.env_args(), str(LAN_SH), "exec", host]

    def run_in(self, host: str, *cmd: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
        argv = self.exec_prefix(host) + list(cmd)
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=h.clean_env(),
                           stdin=subprocess.DEVNULL)
        if check and p.returncode != 0:
            raise LanError(f"`{' '.join(argv)}` failed with status {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p

    def addr(self, host: str, family: int = 4) -> str:
        return self.sh("addr", host, str(family)).stdout.strip()

    def block_mdns(self, host: str, peer: str | None = None) -> str:
        return self.sh("block-mdns", host, *([peer] if peer else [])).stdout

    def unblock_mdns(self, host: str, peer: str | None = None) -> str:
        return self.sh("unblock-mdns", host, *([peer] if peer else [])).stdout

    def mdns_drops(self, host: str) -> int:
        """Packets dropped so far by host's block-mdns rules (0 when nothing is blocked)."""
        p = self.run_in(host, "nft", "-j", "list", "table", "inet", "locafoto_lan", check=False)
        if p.returncode != 0:
            return 0
        total = 0
        for item in json.loads(p.stdout).get("nftables", []):
            for expr in item.get("rule", {}).get("expr", []):
                if isinstance(expr, dict) and "counter" in expr:
                    total += int(expr["counter"].get("packets", 0))
        return total

    def browse(self, host: str, service: str = "_locafoto._tcp") -> list[dict[str, Any]]:
        """The resolved advertisements of `service` as `host`'s avahi-daemon sees them now
        (`avahi-browse -prt`): [{"instance", "interface", "protocol", "address", "port", "txt"}],
        txt as a dict."""
        p = self.run_in(host, "avahi-browse", "-p", "-r", "-t", service, timeout=30)
        records = []
        for line in p.stdout.splitlines():
            fields = line.split(";", 9)
            if len(fields) < 10 or fields[0] != "=":
                continue
            txt = {}
            for entry in re.findall(r'"((?:[^"\\]|\\.)*)"', fields[9]):
                k, _, v = entry.partition("=")
                txt[k] = v
            records.append({"instance": fields[3], "interface": fields[1], "protocol": fields[2],
                            "address": fields[7], "port": int(fields[8]), "txt": txt})
        return records

    def avahi_log(self, host: str) -> str:
        try:
            return (Path(self.state) / self.name / "hosts" / host / "avahi.log").read_text(errors="replace")
        except FileNotFoundError:
            return "(no avahi log)"


class LanNode(h.Node):
    """A node whose agent and CLI calls run inside one LAN host."""

    def __init__(self, lan: Lan, host: str, root: Path, name: str, key: str | None = None):
        super().__init__(root, key or host, name)   # key: home folder and log name (default: the host)
        self.lan = lan
        self.host = host
        self.extra: tuple[str, ...] = ()

    def cmd(self, *args: str, json: bool = True) -> list[str]:
        return self.lan.exec_prefix(self.host) + super().cmd(*args, json=json)

    def start(self, *extra: str, locked: bool = False, wait_discovery: bool = True) -> "LanNode":
        """Starts `locafoto agent` inside the host on 0.0.0.0:47820 (unless `extra` says another
        --listen) and waits until it answers
        (and, by default, until its mDNS discovery runs on the host's avahi-daemon)."""
        assert not self.running, f"{self.key} already runs"
        args = self.lan.exec_prefix(self.host) + [
            h.BIN, "agent", "--home", str(self.home), "--name", self.name, "--port", str(AGENT_PORT)]
        if "--listen" not in extra:
            args += ["--listen", "0.0.0.0"]
        args += ["--locked"] if locked else ["--passphrase-file", str(self.passfile)]
        args += list(extra)
        self.extra = tuple(extra)
        # `env` and lan.sh exec into nsenter, nsenter (no pid namespace) execs the agent: the
        # Popen pid IS the agent, so SIGTERM from stop() reaches it directly.
        status = self._launch(args, h.clean_env(), where=f" on LAN host {self.host}")
        assert self.port == AGENT_PORT, f"{self.key} listens on {self.port}, not {AGENT_PORT}: {status}"
        if wait_discovery:
            h.wait_for(lambda: self.run("status")["discovery"] == "running", timeout=h.WAIT,
                       what=f"{self.key}'s mDNS discovery to run on host {self.host}'s avahi-daemon\n{self.lan.status()}")
        return self

    def restart(self, *extra: str) -> "LanNode":
        if self.running:
            self.stop()
        return self.start(*extra)

    def address(self, family: int = 4) -> str:
        return self.lan.addr(self.host, family)

    def endpoint(self) -> str:
        return f"{self.address(4)}:{AGENT_PORT}"


# What `locafoto relay run` prints when it is up (as the agent prints "agent '…' [fp] listening …").
RELAY_STARTED = re.compile(r"relay '(?P<name>.*?)' \[(?P<fp>[^\]]+)\] listening on port (?P<port>\d+)")


class RelayLanNode(LanNode):
    """A headless store-and-forward relay (`locafoto relay run`: no vault, no passphrase) inside
    one LAN host. Its home is its own folder (key), so a host can run an agent at another time."""

    def init_vault(self) -> None:
        raise AssertionError("a relay has no vault")

    def start(self, *extra: str, locked: bool = False, wait_discovery: bool = False) -> "RelayLanNode":
        """Starts `locafoto relay run` inside the host on 0.0.0.0:47820 with `extra` (which must
        say who may deposit: --allow FP or --open) and waits until it answers `relay status`
        and has logged its fingerprint and port. wait_discovery: also wait until the host's own
        avahi-daemon lists its advertisement (TXT role=relay)."""
        assert not self.running, f"{self.key} already runs"
        assert not locked, "a relay has no vault to lock"
        args = self.lan.exec_prefix(self.host) + [
            h.BIN, "relay", "run", "--home", str(self.home), "--name", self.name,
            "--listen", "0.0.0.0", "--port", str(AGENT_PORT), *extra]
        self.extra = tuple(extra)
        self._log_handle = open(self.logfile, "ab")
        self._log_handle.write(f"===== {' '.join(args)}\n".encode())
        self._log_handle.flush()
        log_from = self._log_handle.tell()
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log_handle,
                                     stderr=subprocess.STDOUT, env=h.clean_env(), start_new_session=True)

        def answers():
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited with status {self.proc.returncode}")
            r = self.run("relay", "status", check=False)
            if r.returncode != 0 or not isinstance(r.data, dict):
                return None
            with open(self.logfile, "rb") as f:
                f.seek(log_from)
                started = RELAY_STARTED.search(f.read().decode(errors="replace"))
            return started

        try:
            started = h.wait_for(answers, timeout=h.WAIT,
                                 what=f"relay {self.key} on LAN host {self.host} to answer `relay status` and log "
                                      f"\"relay '<name>' [<fingerprint>] listening on port <n>\"")
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- relay log ---\n{self.log_text()}") from None
        self.fingerprint = started["fp"]
        self.port = int(started["port"])
        assert started["name"] == self.name, f"relay logs the name {started['name']!r}, not {self.name!r}"
        assert self.port == AGENT_PORT, f"relay {self.key} listens on {self.port}, not {AGENT_PORT}"
        if wait_discovery:
            self.wait_advertised(self.host)
        return self

    def status(self) -> dict[str, Any]:
        """`locafoto relay status --json`."""
        return self.run("relay", "status")

    def queue_for(self, fingerprint: str) -> dict[str, Any] | None:
        """The relay's queue for one recipient (None when nothing is held for it)."""
        queues = [q for q in self.status()["queues"] if q["recipient"]["fingerprint"] == fingerprint]
        assert len(queues) <= 1, f"several queues for {fingerprint}: {queues}"
        return queues[0] if queues else None

    def advertisement(self, seen_from: str) -> dict[str, Any] | None:
        """This relay's mDNS record (by its TXT fp) as host `seen_from` resolves it."""
        mine = [r for r in self.lan.browse(seen_from) if r["txt"].get("fp") == self.fingerprint]
        return mine[0] if mine else None

    def wait_advertised(self, seen_from: str, timeout: float = h.WAIT) -> dict[str, Any]:
        return h.wait_for(lambda: self.advertisement(seen_from), timeout,
                          f"host {seen_from} to resolve relay {self.key}'s mDNS advertisement (fp={self.fingerprint})\n"
                          f"{self.lan.status()}")


def lan_addresses(peer: dict[str, Any], subnet_prefix: str = "10.77.0.") -> list[str]:
    return [a for a in peer.get("addresses", []) if a.startswith(subnet_prefix)]


def root_namespace_snapshot() -> str:
    """Interfaces, addresses and routes of the root network namespace (must never change)."""
    parts = []
    for cmd in (["ip", "-br", "link"], ["ip", "-br", "addr"], ["ip", "route"], ["ip", "-6", "route"]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        parts.append(f"$ {' '.join(cmd)}\n{p.stdout}")
    return "\n".join(parts)
