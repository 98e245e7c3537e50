"""The one way a command fails (protocol/control-api.md "Exit statuses"): one line on stderr,
with --json the same error as JSON on stdout, and the status of its code, for the agent and
the relay as for every other command."""
import json
import subprocess

import lfharness as h


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([h.BIN, *args], capture_output=True, text=True, env=h.clean_env(), timeout=60,
                          stdin=subprocess.DEVNULL)


def failed(p: subprocess.CompletedProcess, status: int, code: str, words: str) -> None:
    assert p.returncode == status, (p.returncode, p.stdout, p.stderr)
    assert json.loads(p.stdout) == {"error": {"code": code, "message": json.loads(p.stdout)["error"]["message"]}}, p.stdout
    assert words in json.loads(p.stdout)["error"]["message"], p.stdout
    assert p.stderr.startswith("locafoto: ") and words in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_a_relay_told_nobody_may_deposit_is_a_usage_error(tmp_path):
    failed(run("relay", "--home", str(tmp_path / "r"), "--json"), 64, "invalidRequest", "say who may deposit")


def test_an_agent_given_a_bad_peer_address_is_a_usage_error(tmp_path):
    failed(run("agent", "--home", str(tmp_path / "a"), "--peer", "nowhere::", "--json"), 64, "invalidRequest",
           "is not HOST:PORT")


def test_a_command_without_an_agent_is_unavailable(tmp_path):
    failed(run("status", "--home", str(tmp_path / "a"), "--json"), 69, "unavailable", "no agent is running")


def test_an_agent_whose_identity_needs_the_passphrase_cannot_start_locked(make_node):
    a = make_node("a")
    a.stop()
    assert a.run("identity", "protect", "--passphrase-file", str(a.passfile))["protection"] == "vault"
    failed(run("agent", "--home", str(a.home), "--locked", "--json"), 64, "invalidRequest", "cannot start --locked")
