"""Helpers for the web app's tests (issue 10 §5): plain HTTP to an agent's web port, logging in
through the address `locafoto web` prints, and a real headless Chromium driven by Selenium."""

from __future__ import annotations

import http.client
import os
import re
import shutil
from pathlib import Path

import lfharness as h


def start_web(node: h.Node, *extra: str, locked: bool = False, wait_discovery: bool = False) -> int:
    """Starts the node's agent with its web app on a free port; returns the port."""
    node.start("--web-port", "0", *extra, locked=locked, wait_discovery=wait_discovery)
    url = node.run("status")["web"]
    m = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/", url or "")
    assert m, f"status names no web app: {url!r}"
    return int(m.group(1))


def request(port: int, method: str, path: str, headers: dict[str, str] | None = None, body: bytes | None = None,
            host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request on 127.0.0.1:port; `host` replaces the Host header."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=h.WAIT)
    try:
        hdrs = {"Host": host or f"127.0.0.1:{port}", **(headers or {})}
        c.request(method, path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        c.close()


def login_url(node: h.Node) -> str:
    out = node.run("web", json=False).stdout.splitlines()
    assert out and out[0].startswith("http://127.0.0.1:"), out
    return out[0]


def login(node: h.Node, port: int) -> str:
    """Logs in over plain HTTP; returns the `Cookie` header value."""
    url = login_url(node)
    status, headers, _ = request(port, "GET", url.split(f":{port}", 1)[1])
    assert status == 200, status
    cookie = headers["set-cookie"]
    return cookie.split(";")[0]


def own_origin(port: int) -> dict[str, str]:
    return {"Origin": f"http://127.0.0.1:{port}"}


def chromium_driver():
    """Headless Chromium (Debian's, with its chromedriver) through Selenium."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise AssertionError("selenium is missing: run scripts/setup.sh (pip install selenium)") from None
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert browser and driver, "chromium and chromium-driver are missing: run scripts/setup.sh"
    o = webdriver.ChromeOptions()
    o.binary_location = browser
    for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900",
              "--disable-background-networking", "--no-first-run", "--no-default-browser-check"]:
        o.add_argument(a)
    d = webdriver.Chrome(options=o, service=Service(driver, log_output=os.devnull))
    d.set_page_load_timeout(60)
    d.set_script_timeout(60)
    return d


def jpeg_bytes(path: Path) -> bytes:
    return path.read_bytes()
