"""The container image's entrypoint (scripts/docker-entrypoint.sh), run outside a container:
configuration by environment variables (agent and relay roles), health check command, clean
stop, refusals."""
import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

import lfharness as h

ENTRYPOINT = Path(__file__).resolve().parents[2] / "scripts" / "docker-entrypoint.sh"
# Two valid fingerprints (protocol/vectors/fingerprint.json) for a relay's allow-list.
ALLOWED = [v["fingerprint"] for v in json.loads((h.REPO / "protocol" / "vectors" / "fingerprint.json").read_text())["vectors"][:2]]


def env_for(workdir: Path, **extra: str) -> dict[str, str]:
    bindir = workdir / "bin"
    bindir.mkdir(exist_ok=True)
    link = bindir / "locafoto"
    if not link.exists():
        link.symlink_to(h.BIN)
    env = h.clean_env()
    env["PATH"] = f"{bindir}:{env['PATH']}"
    env["LOCAFOTO_HOME"] = str(workdir / "data")
    env.update(extra)
    return env


def healthcheck(env: dict[str, str]) -> subprocess.CompletedProcess:
    """The image's HEALTHCHECK (`docker-entrypoint.sh healthcheck`) with the container's environment."""
    return subprocess.run(["sh", str(ENTRYPOINT), "healthcheck"], env=env, capture_output=True, text=True, timeout=30)


@contextlib.contextmanager
def entrypoint(workdir: Path, env: dict[str, str], *args: str):
    """Runs the entrypoint in the background until the health check passes; at the end it must
    stop cleanly (exit status 0) on SIGTERM, as on `docker stop`."""
    log_path = workdir / "entry.log"
    with open(log_path, "ab") as log:
        p = subprocess.Popen(["sh", str(ENTRYPOINT), *args], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            def healthy():
                if p.poll() is not None:
                    raise RuntimeError(f"exited with status {p.returncode}")
                return healthcheck(env).returncode == 0
            try:
                h.wait_for(healthy, what="the health check to pass")
            except AssertionError as e:
                raise AssertionError(f"{e}\n--- entrypoint log ---\n{log_path.read_text(errors='replace')}") from None
            yield p
        finally:
            if not h.terminate(p):
                raise AssertionError(f"no exit within {h.STOP_TIMEOUT:.0f}s of SIGTERM\n{log_path.read_text(errors='replace')}")
    assert p.returncode == 0, f"exit status {p.returncode} after SIGTERM\n{log_path.read_text(errors='replace')}"


def relay_status(env: dict[str, str]) -> dict:
    r = subprocess.run(["locafoto", "relay", "status", "--json"], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"locafoto relay status --json: exit status {r.returncode}\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout)


def test_entrypoint_configures_the_agent_from_the_environment(workdir):
    (workdir / "secret").write_text(h.PASSPHRASE + "\n")
    env = env_for(workdir, LOCAFOTO_NAME=h.unique("itbox"), LOCAFOTO_PORT="0", LOCAFOTO_PEERS="127.0.0.1:9",
                  LOCAFOTO_PASSPHRASE_FILE=str(workdir / "secret"), LOCAFOTO_SKIP_INTERFACES="docker,veth")
    subprocess.run([h.BIN, "vault", "init", "--kdf", "interactive"], env=env, check=True, capture_output=True)
    with entrypoint(workdir, env, "--listen", "127.0.0.1"):
        status = json.loads(subprocess.run(["locafoto", "status", "--json"], env=env, capture_output=True, text=True).stdout)
        assert status["name"] == env["LOCAFOTO_NAME"] and status["vault"] == "unlocked", status
        assert status["home"] == env["LOCAFOTO_HOME"]
        doctor = json.loads(subprocess.run(["locafoto", "doctor", "--json"], env=env, capture_output=True, text=True).stdout)
        assert doctor["staticPeers"] == ["127.0.0.1:9"]
    assert oct(os.stat(workdir / "data").st_mode & 0o777) == "0o700"


def test_entrypoint_runs_a_relay_from_the_environment(workdir):
    """LOCAFOTO_ROLE=relay: a headless relay (no vault, no passphrase) with the quotas, expiry
    and allow-list of the environment; the health check asks `relay status`."""
    name = h.unique("itrelay")
    env = env_for(workdir, LOCAFOTO_ROLE="relay", LOCAFOTO_NAME=name, LOCAFOTO_PORT="0",
                  LOCAFOTO_RELAY_ALLOW=",".join(ALLOWED), LOCAFOTO_PEERS="127.0.0.1:9",
                  LOCAFOTO_RELAY_MAX_SENDER_BYTES="64M", LOCAFOTO_RELAY_MAX_TOTAL_BYTES="1G",
                  LOCAFOTO_RELAY_MAX_SENDER_ITEMS="50", LOCAFOTO_RELAY_MAX_TOTAL_ITEMS="500",
                  LOCAFOTO_RELAY_EXPIRY="3600")
    with entrypoint(workdir, env, "--listen", "127.0.0.1", "--no-discovery"):
        status = relay_status(env)
        assert status["admission"] == "allow-list" and status["allowed"] == len(ALLOWED), status
        assert status["limits"]["maxBytesPerSender"] == 64 << 20, status["limits"]
        assert status["limits"]["maxBytesTotal"] == 1 << 30, status["limits"]
        assert status["limits"]["maxItemsPerSender"] == 50, status["limits"]
        assert status["limits"]["maxItemsTotal"] == 500, status["limits"]
        assert status["limits"]["expiry"] == 3600, status["limits"]
        assert status["queues"] == [] and status["totals"] == {"offers": 0, "items": 0, "bytes": 0}, status
    log = (workdir / "entry.log").read_text(errors="replace")
    assert f"relay '{name}' [" in log and "listening on port" in log, log
    assert not (workdir / "data" / "vault").exists(), "a relay made a vault"


def test_entrypoint_runs_an_open_relay(workdir):
    env = env_for(workdir, LOCAFOTO_ROLE="relay", LOCAFOTO_PORT="0", LOCAFOTO_RELAY_OPEN="1")
    with entrypoint(workdir, env, "--listen", "127.0.0.1", "--no-discovery"):
        status = relay_status(env)
        assert status["admission"] == "open" and status.get("allowed") is None, status   # null or absent


def test_entrypoint_relay_without_admission_refuses_to_start(workdir):
    """Neither LOCAFOTO_RELAY_ALLOW nor LOCAFOTO_RELAY_OPEN: nobody could deposit, so the relay
    does not start, and says why."""
    env = env_for(workdir, LOCAFOTO_ROLE="relay", LOCAFOTO_PORT="0")
    r = subprocess.run(["sh", str(ENTRYPOINT), "--listen", "127.0.0.1", "--no-discovery"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 64, f"exit status {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    assert "allow" in r.stderr.lower() and "open" in r.stderr.lower(), f"unclear refusal:\n{r.stderr}"
    assert healthcheck(env).returncode != 0


def test_entrypoint_refuses_a_bad_port(workdir):
    r = subprocess.run(["sh", str(ENTRYPOINT)], env=env_for(workdir, LOCAFOTO_PORT="47a"), capture_output=True, text=True)
    assert r.returncode == 64 and "LOCAFOTO_PORT must be a number" in r.stderr


@pytest.mark.parametrize("variables, message", [
    ({"LOCAFOTO_ROLE": "relais"}, "LOCAFOTO_ROLE must be agent or relay, not 'relais'"),
    ({"LOCAFOTO_ROLE": "relay", "LOCAFOTO_RELAY_OPEN": "1", "LOCAFOTO_RELAY_MAX_SENDER_BYTES": "2GB"},
     "LOCAFOTO_RELAY_MAX_SENDER_BYTES must be a number of bytes with an optional K, M or G suffix"),
    ({"LOCAFOTO_ROLE": "relay", "LOCAFOTO_RELAY_OPEN": "1", "LOCAFOTO_RELAY_MAX_TOTAL_ITEMS": "1e4"},
     "LOCAFOTO_RELAY_MAX_TOTAL_ITEMS must be a number, not '1e4'"),
    ({"LOCAFOTO_ROLE": "relay", "LOCAFOTO_RELAY_OPEN": "1", "LOCAFOTO_RELAY_EXPIRY": "7d"},
     "LOCAFOTO_RELAY_EXPIRY must be a number, not '7d'"),
])
def test_entrypoint_refuses_bad_relay_settings(workdir, variables, message):
    r = subprocess.run(["sh", str(ENTRYPOINT)], env=env_for(workdir, LOCAFOTO_PORT="0", **variables),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 64 and message in r.stderr, f"exit status {r.returncode}\n{r.stderr}"
    assert not (workdir / "data").exists(), "started something before refusing"
