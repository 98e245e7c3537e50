"""The agent's web app over plain HTTP (http.client), against real agents (issue 10 §5): login
with one-time codes from the control socket, session cookies, the Host check against DNS
rebinding, the Origin check against cross-site requests, security headers, photos answered from
memory, uploads for sending; and that the control socket keeps working without any of it."""

import json

import lfharness as h
import webharness as w
from lfharness import fixture, wait_for

JPG = fixture("sample.jpg")


def json_of(body: bytes) -> dict:
    return json.loads(body.decode())


def test_without_a_session_the_app_says_how_to_log_in(make_node):
    n = make_node("w", start=False)
    port = w.start_web(n)
    status, headers, body = w.request(port, "GET", "/")
    assert status == 401
    assert headers["content-type"].startswith("text/html")
    assert b"locafoto web" in body
    for path in ["/v1/status", "/v1/events", "/v1/photos", "/v1/inbox"]:
        status, headers, body = w.request(port, "GET", path)
        assert status == 401, path
        assert json_of(body)["error"]["code"] == "unauthenticated"
        assert "locafoto web" in json_of(body)["error"]["message"]
    # Even the refusals carry the security headers.
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    # The login page's script and style need no session (the explanation is styled); nothing
    # else under /assets/ is a way around the login.
    assert w.request(port, "GET", "/assets/app.css")[0] == 200
    for sneaky in ["/assets/../v1/status", "/assets/%2e%2e/v1/status", "/assets/app.css/../../v1/status", "/assets//v1/status"]:
        assert w.request(port, "GET", sneaky)[0] == 401, sneaky
    # The control socket needs no login, as before.
    assert n.run("status")["name"] == n.name


def test_a_login_address_works_once_and_the_session_opens_the_api(make_node):
    n = make_node("w", start=False)
    port = w.start_web(n)
    url = w.login_url(n)
    path = url.split(f":{port}", 1)[1]
    code = path.split("code=", 1)[1]
    status, headers, body = w.request(port, "GET", path)
    assert status == 200
    cookie = headers["set-cookie"]
    attributes = [a.strip() for a in cookie.split(";")]
    assert attributes[0].startswith(f"locafoto-{port}=")
    assert "HttpOnly" in attributes and "SameSite=Strict" in attributes and "Path=/" in attributes
    # The code is not echoed, and the page replaces itself (and the address with the code) at once.
    assert code.encode() not in body
    assert b"/assets/login.js" in body
    session = attributes[0]
    assert session.split("=", 1)[1] != code

    # Used once: dead.
    status, _, body = w.request(port, "GET", path)
    assert status == 401 and b"works once" in body
    # A made-up code, or a malformed one.
    for bad in ["A" * 43, "short", "x" * 5000, ""]:
        assert w.request(port, "GET", "/login?code=" + bad)[0] == 401

    status, headers, body = w.request(port, "GET", "/v1/status", headers={"Cookie": session})
    assert status == 200
    assert json_of(body)["fingerprint"] == n.fingerprint
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-store"
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    status, headers, body = w.request(port, "GET", "/", headers={"Cookie": session})
    assert status == 200 and b'<script type="module" src="/assets/app.js"' in body and b"<script>" not in body

    # A session cookie of another value, or of another agent's name, opens nothing.
    assert w.request(port, "GET", "/v1/status", headers={"Cookie": f"locafoto-{port}=" + "B" * 43})[0] == 401
    assert w.request(port, "GET", "/v1/status", headers={"Cookie": "locafoto-1=" + session.split("=", 1)[1]})[0] == 401

    # Logging out ends the session.
    assert w.request(port, "POST", "/logout", headers={"Cookie": session, **w.own_origin(port)})[0] == 200
    assert w.request(port, "GET", "/v1/status", headers={"Cookie": session})[0] == 401

    # Neither the code nor the session is in the agent's log.
    log = n.log_text()
    assert code not in log and session.split("=", 1)[1] not in log
    assert f"http://127.0.0.1:{port}/" in log


def test_host_must_be_the_app_itself(make_node):
    """DNS rebinding: a page at evil.example whose name now points at 127.0.0.1 sends its own Host."""
    n = make_node("w", start=False)
    port = w.start_web(n)
    session = w.login(n, port)
    for host in ["evil.example", f"evil.example:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1", f"[::1]:{port}"]:
        status, headers, body = w.request(port, "GET", "/v1/status", headers={"Cookie": session}, host=host)
        assert status == 403, host
        assert json_of(body)["error"]["code"] == "refused"
        assert "nosniff" == headers["x-content-type-options"]
    # Before the login too: the login route is no way around it.
    assert w.request(port, "GET", "/login?code=x", host="evil.example")[0] == 403
    assert w.request(port, "GET", "/v1/status", headers={"Cookie": session}, host=f"localhost:{port}")[0] == 200


def test_cross_site_requests_change_nothing(make_node):
    n = make_node("w", start=False)
    port = w.start_web(n)
    session = w.login(n, port)
    refused = [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": f"http://127.0.0.1:{port + 1}"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {},  # neither: only a browser's own page may change things here
    ]
    for extra in refused:
        status, _, body = w.request(port, "POST", "/v1/lock", headers={"Cookie": session, **extra})
        assert status == 403, extra
        assert json_of(body)["error"]["code"] == "refused"
        assert n.run("status")["vault"] == "unlocked", extra
    status, _, _ = w.request(port, "POST", "/v1/lock", headers={"Cookie": session, "Sec-Fetch-Site": "same-origin"})
    assert status == 200
    assert n.run("status")["vault"] == "locked"
    # The passphrase goes in the body of a same-origin POST.
    body = json.dumps({"passphrase": h.PASSPHRASE}).encode()
    status, _, _ = w.request(port, "POST", "/v1/unlock", body=body,
                             headers={"Cookie": session, "Content-Type": "application/json", **w.own_origin(port)})
    assert status == 200
    assert n.run("status")["vault"] == "unlocked"
    # Login codes come from the control socket only, never from the web app.
    status, _, _ = w.request(port, "POST", "/v1/web/login", headers={"Cookie": session, **w.own_origin(port)})
    assert status == 404


def test_photos_come_from_memory_and_uploads_never_touch_the_disk(make_node):
    n = make_node("w", start=False)
    port = w.start_web(n)
    session = w.login(n, port)
    original = JPG.read_bytes()
    n.run("import", str(JPG))
    pid = n.photos()[0]["id"]
    status, headers, body = w.request(port, "GET", f"/v1/photos/{pid}/original", headers={"Cookie": session})
    assert status == 200 and body == original
    assert headers["content-type"] == "image/jpeg" and headers["cache-control"] == "no-store"

    def thumbnail():
        status, headers, body = w.request(port, "GET", f"/v1/photos/{pid}/thumbnail", headers={"Cookie": session})
        return (headers, body) if status == 200 else None
    headers, body = wait_for(thumbnail, what="the thumbnail (made by the indexer after the import)")
    assert headers["content-type"] == "image/jpeg" and body[:2] == b"\xff\xd8"

    # An upload is held in memory until a send takes it.
    status, _, body = w.request(port, "POST", "/v1/uploads?name=..%2F..%2Fx.jpg", body=original,
                                headers={"Cookie": session, **w.own_origin(port)})
    assert status == 201, body
    up = json_of(body)
    assert up["name"] == "x.jpg" and up["kind"] == "jpeg" and up["bytes"] == len(original)
    plain = [p for p in h.files_in(n.home) if p.is_file() and original in p.read_bytes()]
    assert plain == [], f"plaintext of the upload on disk: {plain}"
    # Larger than the 1 MiB bound of JSON bodies: uploads are streamed.
    big = original + bytes(3 << 20)
    status, _, body = w.request(port, "POST", "/v1/uploads?name=big.jpg", body=big, headers={"Cookie": session, **w.own_origin(port)})
    assert status == 201 and json_of(body)["bytes"] == len(big), body
    status, _, body = w.request(port, "POST", "/v1/uploads?name=notes.txt", body=b"not an image at all",
                                headers={"Cookie": session, **w.own_origin(port)})
    assert status == 400 and json_of(body)["error"]["code"] == "unsupported"
    # An unknown upload id in a send is refused before anything starts.
    status, _, body = w.request(port, "POST", "/v1/send", body=json.dumps({"peer": "nobody", "uploads": ["nope"]}).encode(),
                                headers={"Cookie": session, "Content-Type": "application/json", **w.own_origin(port)})
    assert status == 404 and "no upload nope" in json_of(body)["error"]["message"]


def test_web_prints_one_login_address_and_under_json_only_json(make_node):
    """`locafoto web`: the address, then how long it works; with --json only the agent's answer,
    so that a script can parse the output whole."""
    n = make_node("w", start=False)
    port = w.start_web(n)
    answer = n.run("web")  # fails unless stdout is one JSON document
    assert answer["url"].startswith(f"http://127.0.0.1:{port}/") and answer["expiresAt"], answer
    lines = n.run("web", json=False).stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"http://127.0.0.1:{port}/"), lines
    assert lines[1].startswith("Open this address in your browser within "), lines


def test_no_web_app_when_turned_off(make_node):
    n = make_node("w", start=False)
    n.start("--no-web", wait_discovery=False)
    assert n.run("status").get("web") is None
    r = n.run("web", check=False)
    assert r.returncode == 66, r.output
    assert "--no-web" in r.output


def test_the_event_stream_is_live_and_ends_when_the_agent_stops(make_node):
    """The page lives on server-sent events; an open stream must not hold the agent's shutdown
    (nor cut the desktop notifications' own stream first: test_notifications.py)."""
    import http.client
    n = make_node("w", start=False)
    port = w.start_web(n)
    session = w.login(n, port)
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=h.WAIT)
    c.request("GET", "/v1/events", headers={"Cookie": session, "Accept": "text/event-stream", "Host": f"127.0.0.1:{port}"})
    r = c.getresponse()
    assert r.status == 200 and r.getheader("content-type") == "text/event-stream"

    def next_event():
        fields = {}
        while True:
            line = r.readline().decode()
            assert line, "the stream ended"
            if line == "\n":
                return fields
            k, _, v = line.rstrip("\n").partition(": ")
            fields[k] = v
    assert next_event()["event"] == "ready"
    n.run("lock")
    # Agents of other tests come and go on the same avahi-daemon (peer.seen, peer.left): the
    # lock is the next event of its own kind, not necessarily the next event.
    e = next_event()
    while e["event"].startswith("peer."):
        e = next_event()
    assert e["event"] == "vault.locked" and json.loads(e["data"])["kind"] == "vault.locked"
    n.stop()  # strict: exit status 0 within 10 s of SIGTERM, the stream still open
    assert r.read() == b""
    c.close()


def test_a_web_session_reaches_no_file_by_path_and_no_key(make_node, workdir):
    """Through the web app, what names files on this machine or shows a secret key does not exist:
    a cookie is all a web session has, and a browser also sends it to other servers on 127.0.0.1.
    The control socket keeps all of it."""
    n = make_node("w", start=False)
    port = w.start_web(n)
    session = w.login(n, port)
    post = {"Cookie": session, **w.own_origin(port), "Content-Type": "application/json"}
    target = workdir / "written-by-web"
    for path, body in [("/v1/backup", {"path": str(target)}), ("/v1/imports", {"paths": [str(workdir)]}),
                       ("/v1/export", {"selection": {"all": True}, "directory": str(workdir)}),
                       ("/v1/open", {"path": str(target)}), ("/v1/keys/create", {"name": "k"}),
                       ("/v1/keys/export", {"name": "k"}),
                       ("/v1/bundle", {"file": str(JPG), "peer": "x", "output": str(target)})]:
        status, _, answer = w.request(port, "POST", path, headers=post, body=json.dumps(body).encode())
        assert status == 404, (path, status, answer)
    assert w.request(port, "GET", "/v1/keys", headers={"Cookie": session})[0] == 404
    status, _, answer = w.request(port, "POST", "/v1/send", headers=post,
                                  body=json.dumps({"peer": n.name, "files": [str(JPG)]}).encode())
    assert status == 403 and "not files by path" in json_of(answer)["error"]["message"], answer
    assert not target.exists()
    # The socket still has them.
    n.run("key", "create", "k")
    assert [k["name"] for k in n.run("key", "list")] == ["k"]


def test_a_cookie_of_the_same_name_set_elsewhere_does_not_shadow_the_session(make_node):
    n = make_node("w", start=False)
    port = w.start_web(n)
    session = w.login(n, port)
    name, value = session.split("=", 1)
    # Another port on 127.0.0.1 is the same site to a browser: its cookie of this name comes first.
    shadowed = f"{name}={'C' * 43}; {name}={value}"
    assert w.request(port, "GET", "/v1/status", headers={"Cookie": shadowed})[0] == 200


def test_logging_out_ends_the_sessions_event_stream(make_node):
    """A stream opened with a session stops when the session does: after a logout, a cookie that
    was copied keeps no window on offers, peers and transfers."""
    import http.client
    n = make_node("w", start=False)
    port = w.start_web(n)
    session = w.login(n, port)
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=h.WAIT)
    c.request("GET", "/v1/events", headers={"Cookie": session, "Host": f"127.0.0.1:{port}"})
    r = c.getresponse()
    assert r.status == 200 and json.loads(r.readline())["kind"] == "ready"
    assert w.request(port, "POST", "/logout", headers={"Cookie": session, **w.own_origin(port)})[0] == 200
    assert r.read() == b"", "the stream ends with the session"
    c.close()
    # The control socket's streams are not sessions: they go on.
    assert n.run("status")["vault"] == "unlocked"


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's first SOF segment."""
    assert data[:2] == b"\xff\xd8", data[:8]
    i = 2
    while i + 9 < len(data):
        assert data[i] == 0xFF, i
        marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
    raise AssertionError("no SOF segment")


def test_display_answers_heic_and_tiff_as_jpeg_and_the_rest_as_imported(make_node):
    """Browsers show no HEIC or TIFF: /display renders them to JPEG in memory (libvips, with
    Debian's libheif), and answers what browsers show as imported, like /original."""
    n = make_node("w", start=False)
    port = w.start_web(n)
    session = w.login(n, port)
    names = ["sample.heic", "sample.tiff", "sample.jpg", "sample.png"]
    n.run("import", *[str(fixture(x)) for x in names])
    ids = {p["name"]: p["id"] for p in n.photos()}
    for name in ["sample.heic", "sample.tiff"]:
        status, headers, body = w.request(port, "GET", f"/v1/photos/{ids[name]}/display", headers={"Cookie": session})
        assert status == 200, (name, body[:300])
        assert headers["content-type"] == "image/jpeg" and headers["cache-control"] == "no-store"
        # The rendition keeps the photo's full size (both fixtures are far below 4096 px).
        wide, high = {"sample.heic": (64, 48), "sample.tiff": (48, 32)}[name]
        assert jpeg_size(body) == (wide, high), name
    for name, mime in [("sample.jpg", "image/jpeg"), ("sample.png", "image/png")]:
        status, headers, body = w.request(port, "GET", f"/v1/photos/{ids[name]}/display", headers={"Cookie": session})
        assert status == 200 and headers["content-type"] == mime and body == fixture(name).read_bytes(), name
    plain = [p for p in h.files_in(n.home) if p.is_file() and p.read_bytes()[:2] == b"\xff\xd8"]
    assert plain == [], f"a JPEG in clear on disk: {plain}"


def test_vault_changes_made_with_the_cli_are_events_on_the_web_stream(make_node):
    """Favourites, tags, albums and deletions made elsewhere (here the CLI, over the control
    socket) reach a web page's event stream, so it redraws without a reload."""
    import http.client
    n = make_node("w", start=False)
    port = w.start_web(n)
    session = w.login(n, port)
    n.run("import", str(JPG))
    pid = n.photos()[0]["id"]
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=h.WAIT)
    c.request("GET", "/v1/events?kinds=photo,album",
              headers={"Cookie": session, "Accept": "text/event-stream", "Host": f"127.0.0.1:{port}"})
    r = c.getresponse()
    assert r.status == 200

    def next_event() -> dict:
        """The next event of the stream, photo.indexed (the indexer's, at its own pace) left out."""
        while True:
            fields = {}
            while True:
                line = r.readline().decode()
                assert line, "the stream ended"
                if line == "\n":
                    break
                k, _, v = line.rstrip("\n").partition(": ")
                fields[k] = v
            e = json.loads(fields["data"])
            assert e["kind"] == fields["event"]
            if e["kind"] != "photo.indexed":
                return e
    assert next_event()["kind"] == "ready"

    n.run("favorite", pid[:8])
    e = next_event()
    assert (e["kind"], e["state"], e["items"], e["photo"]) == ("photo.changed", "favorite", 1, pid), e
    n.run("tag", "--add", "beach", pid)
    e = next_event()
    assert (e["kind"], e["state"], e["items"], e["photo"]) == ("photo.changed", "tag", 1, pid), e
    # A filter instead of ids: how many, not which.
    n.run("hide", "--tag", "beach")
    e = next_event()
    assert (e["kind"], e["state"], e["items"]) == ("photo.changed", "hide", 1) and "photo" not in e, e
    n.run("album", "create", "Trip")
    e = next_event()
    assert (e["kind"], e["state"], e["name"]) == ("album.changed", "create", "Trip"), e
    n.run("album", "add", "Trip", pid)
    e = next_event()
    assert (e["kind"], e["state"], e["name"], e["items"]) == ("album.changed", "add", "Trip", 1), e
    n.run("album", "rename", "Trip", "Sea")
    e = next_event()
    assert (e["kind"], e["state"], e["name"]) == ("album.changed", "rename", "Sea"), e
    n.run("delete", "--yes", pid)
    e = next_event()
    assert (e["kind"], e["items"], e["photo"]) == ("photo.deleted", 1, pid), e
    c.close()
