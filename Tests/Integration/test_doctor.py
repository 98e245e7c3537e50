"""`locafoto doctor`: what discovery sees and why a peer may be missing."""
import signal
import subprocess

import lfharness as h


def test_doctor_with_avahi(make_node):
    a = make_node("a", name=h.unique("itdoc"))
    status = a.run("status")
    d = h.wait_for(lambda: (lambda r: r if r["ownAdvertisement"] else None)(a.run("doctor")), what="the own advertisement")
    checks = {c["name"]: c for c in d["checks"]}
    assert checks["avahi-daemon"]["ok"] is True
    assert checks["own advertisement"]["ok"] is True
    assert f":{status['port']}" in d["ownAdvertisement"][0]
    assert any(i["name"] == "lo" for i in d["interfaces"])
    assert any("5353" in hint for hint in d["hints"])
    text = a.run("doctor", json=False).output
    assert "ok   avahi-daemon" in text and "hint:" in text


def test_doctor_without_avahi(make_node, workdir):
    a = make_node("a", name=h.unique("itdocx"), start=False)
    env = h.clean_env()
    env["DBUS_SYSTEM_BUS_ADDRESS"] = f"unix:path={workdir}/no-such-bus"
    log = open(workdir / "agent.log", "wb")
    p = subprocess.Popen(
        [h.BIN, "agent", "--home", str(a.home), "--name", a.name, "--listen", "127.0.0.1", "--port", "0",
         "--passphrase-file", str(a.passfile), "--peer", "127.0.0.1:1"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        d = h.wait_for(lambda: (lambda r: r if r.returncode == 0 and "unavailable" in r.data["discovery"] else None)(
            a.run("doctor", check=False)), what="doctor to report discovery as unavailable")
        d = d.data
        avahi = next(c for c in d["checks"] if c["name"] == "avahi-daemon")
        assert avahi["ok"] is False and "avahi" in avahi["detail"].lower()
        assert any("--peer" in hint for hint in d["hints"])
        assert d["staticPeers"] == ["127.0.0.1:1"]
        # The agent keeps running without avahi and says so plainly in its log.
        assert p.poll() is None
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=10) == 0
        log.close()
    assert "mDNS discovery is unavailable" in (workdir / "agent.log").read_text()
