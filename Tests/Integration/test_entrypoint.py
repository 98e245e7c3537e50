"""The container image's entrypoint (scripts/docker-entrypoint.sh), run outside a container:
configuration by environment variables, health check command, clean stop."""
import os
import signal
import subprocess
from pathlib import Path

import lfharness as h

ENTRYPOINT = Path(__file__).resolve().parents[2] / "scripts" / "docker-entrypoint.sh"


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


def test_entrypoint_configures_the_agent_from_the_environment(workdir):
    (workdir / "secret").write_text(h.PASSPHRASE + "\n")
    env = env_for(workdir, LOCAFOTO_NAME=h.unique("itbox"), LOCAFOTO_PORT="0", LOCAFOTO_PEERS="127.0.0.1:9",
                  LOCAFOTO_PASSPHRASE_FILE=str(workdir / "secret"), LOCAFOTO_SKIP_INTERFACES="docker,veth")
    subprocess.run([h.BIN, "vault", "init", "--kdf", "interactive"], env=env, check=True, capture_output=True)
    log = open(workdir / "entry.log", "wb")
    p = subprocess.Popen(["sh", str(ENTRYPOINT), "--listen", "127.0.0.1"], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        # The image's HEALTHCHECK is `locafoto status` with the same environment.
        health = lambda: subprocess.run(["locafoto", "status", "--json"], env=env, capture_output=True, text=True)
        h.wait_for(lambda: health().returncode == 0, what="the health check to pass")
        import json
        status = json.loads(health().stdout)
        assert status["name"] == env["LOCAFOTO_NAME"] and status["vault"] == "unlocked", status
        assert status["home"] == env["LOCAFOTO_HOME"]
        doctor = json.loads(subprocess.run(["locafoto", "doctor", "--json"], env=env, capture_output=True, text=True).stdout)
        assert doctor["staticPeers"] == ["127.0.0.1:9"]
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=10) == 0, (workdir / "entry.log").read_text()
        log.close()
    assert oct(os.stat(workdir / "data").st_mode & 0o777) == "0o700"


def test_entrypoint_refuses_a_bad_port(workdir):
    r = subprocess.run(["sh", str(ENTRYPOINT)], env=env_for(workdir, LOCAFOTO_PORT="47a"), capture_output=True, text=True)
    assert r.returncode == 64 and "LOCAFOTO_PORT must be a number" in r.stderr
