"""protocol/openapi.yaml is true (issue 10 §1): it is a valid OpenAPI 3.1 document, it names every
route the agent registers and no other, and the agent's real answers — from real agents that
send, receive, import, organise, export, back up and relay — validate against it. Its objects are
closed (additionalProperties: false), so a field the agent adds without documenting it fails here.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from openapi_spec_validator import validate as validate_spec

import lfharness as h
from lfharness import fixture, wait_for

REPO = Path(__file__).resolve().parents[2]
DOC = yaml.safe_load((REPO / "protocol/openapi.yaml").read_text())
JPG = fixture("sample.jpg")



def _template_regex(template: str, item: dict) -> re.Pattern:
    """A path template as a regex: enum path parameters match only their values."""
    params = {p["name"]: p for p in _parameters(item) if p.get("in") == "path"}

    def part(m: re.Match) -> str:
        values = params.get(m.group(1), {}).get("schema", {}).get("enum")
        return "(?:" + "|".join(re.escape(v) for v in values) + ")" if values else "[^/]+"
    return re.compile("^" + re.sub(r"\\\{(\w+)\\\}", part, re.escape(template)) + "$")


def _parameters(item: dict) -> list[dict]:
    out = []
    for p in item.get("parameters", []) + [p for op in item.values() if isinstance(op, dict) for p in op.get("parameters", [])]:
        if "$ref" in p:
            p = DOC["components"]["parameters"][p["$ref"].rsplit("/", 1)[1]]
        out.append(p)
    return out


def _expand(template: str, item: dict) -> list[str]:
    """A template with its enum path parameters spelled out (`/v1/keys/{action}` → four paths)."""
    paths = [template]
    for p in _parameters(item):
        values = p.get("schema", {}).get("enum")
        if p.get("in") == "path" and values:
            paths = [x.replace("{" + p["name"] + "}", v) for x in paths for v in values]
    return paths


class Checker:
    """Validates answers against the document and remembers which operations were seen."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str, str]] = set()
        self.templates = [(t, _template_regex(t, item), item) for t, item in DOC["paths"].items()]

    def operation(self, method: str, path: str) -> tuple[str, dict]:
        path = path.split("?", 1)[0]
        matches = [(t, item) for t, rx, item in self.templates if rx.match(path) and method.lower() in item]
        assert matches, f"{method} {path} is not in protocol/openapi.yaml"
        # A literal segment beats a parameter (/v1/photos/batch before /v1/photos/{id}).
        t, item = max(matches, key=lambda m: len(re.sub(r"\{\w+\}", "", m[0])))
        return t, item[method.lower()]

    def check(self, method: str, path: str, status: int, content_type: str, body: bytes) -> Any:
        bare = path.split("?", 1)[0]
        if not any(rx.match(bare) and method.lower() in item for _, rx, item in self.templates):
            # Not a route: 404 with the same error shape as every other error.
            assert status == 404 and content_type.startswith("application/json"), (method, path, status)
            return self.validate(json.loads(body), {"$ref": "#/components/schemas/ErrorAnswer"}, f"{method} {path} {status}")
        template, op = self.operation(method, path)
        responses = op["responses"]
        answer = responses.get(str(status)) or responses.get("default")
        assert answer, f"{method} {template} answered {status}, which the document does not list"
        if "$ref" in answer:
            answer = DOC["components"]["responses"][answer["$ref"].rsplit("/", 1)[1]]
        if status >= 400:
            assert str(status) not in responses, f"{method} {template}: an error status listed as a success"
        media = content_type.split(";")[0].strip()
        content = answer["content"]
        kind = next((k for k in content if k == media or (k.endswith("/*") and media.startswith(k[:-1]))), None)
        assert kind, f"{method} {template} {status}: content type {media!r}, documented {list(content)}"
        self.seen.add((method.upper(), template, str(status) if str(status) in responses else "default"))
        if media != "application/json":
            return body
        return self.validate(json.loads(body), content[kind]["schema"], f"{method} {path} {status}")

    @staticmethod
    def validate(value: Any, schema: dict, what: str) -> Any:
        schema = {**schema, "components": DOC["components"]}
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.path))
        assert not errors, f"{what} does not match protocol/openapi.yaml:\n" + "\n".join(
            f"  at {'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:10]) + f"\n{json.dumps(value)[:2000]}"
        return value


@pytest.fixture
def checker() -> Checker:
    return Checker()


def call(checker: Checker, node: h.Node | Path, method: str, path: str, body: Any = None, raw: bytes | None = None,
         expect: int | None = None) -> Any:
    """One request on the node's control socket; the answer is checked against the document."""
    c = h.UnixHTTP(node.socket if isinstance(node, h.Node) else node)
    try:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        headers = {"Content-Type": "application/octet-stream" if raw is not None else "application/json"}
        c.request(method, path, body=data, headers=headers)
        r = c.getresponse()
        payload = r.read()
        status, ctype = r.status, r.getheader("Content-Type", "")
    finally:
        c.close()
    if expect is not None:
        assert status == expect, f"{method} {path}: {status} {payload[:500]!r}"
    return checker.check(method, path, status, ctype, payload)


def test_the_document_is_valid_openapi():
    validate_spec(DOC)


def named_choices() -> dict[str, list[str]]:
    """The control API's closed sets of names: `enum X: String, NamedChoice { case a, b }`."""
    out: dict[str, list[str]] = {}
    for source in (REPO / "Sources/LocafotoControl").glob("*.swift"):
        for m in re.finditer(r"enum (\w+): String, NamedChoice \{\s*case ([\w, ]+)\n", source.read_text()):
            out[m.group(1)] = [c.strip() for c in m.group(2).split(",")]
    return out


def request_actions() -> dict[str, list[str]]:
    """Which actions each request type of several actions serves (`static let actions = [.a, .b]`)."""
    out: dict[str, list[str]] = {}
    for source in (REPO / "Sources/LocafotoControl").glob("*.swift"):
        for m in re.finditer(r"struct (\w+): \w+ \{\s*public static let actions: \[\w+\] = \[([^\]]*)\]",
                             source.read_text()):
            out[m.group(1)] = re.findall(r"\.(\w+)", m.group(2))
    return out


def routes_in_source() -> set[tuple[str, str]]:
    """Every (method, path) the route tables register (the agent's, and each controller's),
    loops over actions spelled out: a list of names, an enum of names (`X.allCases`), or the
    actions of each request type a controller's `route(&t, R.self)` registers (`R.actions`)."""
    choices, actions = named_choices(), request_actions()
    out: set[tuple[str, str]] = set()
    sources = [REPO / "Sources/LocafotoAgent/ControlRoutes.swift", *sorted((REPO / "Sources/LocafotoControlServer").glob("*Controller.swift"))]
    for source in sources:
        text = source.read_text()
        loops = [(m.start(), re.findall(r'"(\w+)"', m.group(1)))
                 for m in re.finditer(r"for (?:action|\(action, \w+\)) in (\[[^\]]*\])", text)]
        loops += [(m.start(), choices[m.group(1)]) for m in re.finditer(r"for action in (\w+)\.allCases", text)]
        registered = [a for m in re.finditer(r"route\(&t, (\w+)\.self\)", text) for a in actions[m.group(1)]]
        loops += [(m.start(), registered) for m in re.finditer(r"for action in R\.actions", text)]
        loops.sort()
        for m in re.finditer(r't\.(get|post|put|streamingPost)\("(/v1/[^"]*)"', text):
            method = {"streamingPost": "POST"}.get(m.group(1), m.group(1).upper())
            path = re.sub(r":(\w+)", r"{\1}", m.group(2)).replace("\\(action.rawValue)", "\\(action)")
            if "\\(action)" in path:
                words = [words for start, words in loops if start < m.start()][-1]
                out |= {(method, path.replace("\\(action)", a)) for a in words}
            else:
                out.add((method, path))
    return out


def routes_in_document() -> set[tuple[str, str]]:
    out = set()
    for template, item in DOC["paths"].items():
        for method in ("get", "post", "put", "delete"):
            if method in item:
                out |= {(method.upper(), p) for p in _expand(template, item)}
    return out


def test_the_document_names_every_route_and_no_other():
    source, document = routes_in_source(), routes_in_document()
    assert len(source) > 40, source
    assert source - document == set(), f"routes missing from protocol/openapi.yaml: {sorted(source - document)}"
    assert document - source == set(), f"routes documented but not served: {sorted(document - source)}"


def test_the_document_names_every_event_kind():
    text = (REPO / "Sources/LocafotoControl/ControlEvent.swift").read_text()
    kinds = set(re.findall(r'case \w+ = "([\w.]+)"', text)) | set(re.findall(r"^\s*case (ready|missed)$", text, re.M))
    documented = set(DOC["components"]["schemas"]["ControlEvent"]["properties"]["kind"]["enum"])
    assert len(kinds) > 15 and kinds == documented, (kinds - documented, documented - kinds)


def test_real_answers_match_the_document(make_node, workdir, checker):
    a, b = make_node("a"), make_node("b")
    a.wait_sees(b)
    b.wait_sees(a)

    # The node itself.
    for node in (a, b):
        call(checker, node, "GET", "/v1/status", expect=200)
        call(checker, node, "GET", "/v1/id", expect=200)
    call(checker, a, "GET", "/v1/doctor", expect=200)
    call(checker, a, "GET", "/v1/peers", expect=200)
    call(checker, a, "GET", "/v1/policy", expect=200)
    call(checker, b, "PUT", "/v1/policy", {"policy": "everyone"}, expect=200)
    call(checker, b, "POST", "/v1/policy", {"policy": "everyone"}, expect=200)
    call(checker, a, "GET", "/v1/localsend", expect=200)
    call(checker, a, "PUT", "/v1/localsend", {"enabled": False}, expect=200)  # on: test_localsend.py
    call(checker, a, "POST", "/v1/localsend/devices/nobody/trust", expect=404)
    call(checker, a, "POST", f"/v1/peers/{b.fp_prefix}/pair", expect=200)
    call(checker, a, "GET", "/v1/pairing", expect=200)
    call(checker, a, "GET", "/v1/relay", expect=404)  # not a relay: an ErrorAnswer
    call(checker, a, "GET", "/v1/nothing-here", expect=404)
    call(checker, a, "POST", "/v1/send", {"peer": 7}, expect=400)

    # The first line of the event stream.
    c = h.UnixHTTP(a.socket)
    c.request("GET", "/v1/events?kinds=vault")
    r = c.getresponse()
    first = r.readline()
    c.close()
    checker.check("GET", "/v1/events", r.status, r.getheader("Content-Type", ""), first)
    assert json.loads(first)["kind"] == "ready"

    # A send, the offer in the inbox with its preview, the decision, the transfer.
    started = call(checker, a, "POST", "/v1/send", {"peer": b.fp_prefix, "files": [str(JPG)]}, expect=202)
    # Its preview may follow the offer (cap late-preview): wait until none is still due.
    offer = wait_for(lambda: [o for o in call(checker, b, "GET", "/v1/inbox", expect=200)
                              if o["state"] == "pending" and not o.get("previewsPending")], h.WAIT,
                     "the offer in b's inbox with its preview")[0]
    call(checker, b, "GET", f"/v1/inbox/{offer['id']}/items/0/preview", expect=200)
    call(checker, b, "GET", f"/v1/inbox/{offer['id']}/items/5/preview", expect=404)
    call(checker, b, "POST", f"/v1/inbox/{offer['id']}/accept", expect=200)
    done = wait_for(lambda: (lambda t: t if t.get("finishedAt") else None)(
        call(checker, a, "GET", f"/v1/transfers/{started['id']}", expect=200)), h.WAIT, "the transfer to end")
    assert done["state"] == "done", done
    call(checker, a, "GET", "/v1/transfers", expect=200)
    call(checker, a, "GET", f"/v1/transfers/{started['id']}?after={done['phase']}&wait=0", expect=200)
    call(checker, a, "POST", f"/v1/transfers/{started['id']}/cancel")  # ended: answered with the transfer or an error
    call(checker, b, "GET", "/v1/inbox?all=1&items=1", expect=200)

    # Several peers: one transfer each; rejected.
    several = call(checker, a, "POST", "/v1/send", {"peers": [b.fp_prefix, b.fp_prefix], "files": [str(JPG)], "preview": False})
    assert "transfers" in several or "error" in several, several

    # The vault: photos, details, images from memory, files written by the agent.
    photo = wait_for(lambda: call(checker, b, "GET", "/v1/photos", expect=200), h.WAIT, "the photo in b's vault")[0]
    pid = photo["id"]
    call(checker, b, "GET", "/v1/photos?sort=originalBytes&order=ascending&limit=5&q=sample", expect=200)
    call(checker, b, "GET", "/v1/photos?minBytes=1&hasLocation=0", expect=200)
    call(checker, b, "GET", "/v1/photos?hasLocation=maybe", expect=400)
    assert call(checker, b, "GET", "/v1/status", expect=200)["photoCount"] >= 1  # with the vault's totals
    call(checker, b, "GET", f"/v1/photos/{pid}", expect=200)
    # 404 (an ErrorAnswer) until the indexer made it, then the JPEG.
    wait_for(lambda: isinstance(call(checker, b, "GET", f"/v1/photos/{pid}/thumbnail"), bytes), h.WAIT, "the thumbnail")
    call(checker, b, "GET", f"/v1/photos/{pid}/original", expect=200)
    call(checker, b, "GET", f"/v1/photos/{pid}/display", expect=200)
    call(checker, b, "POST", f"/v1/photos/{pid}/thumbnail", {"path": str(workdir / "t.jpg")}, expect=200)
    call(checker, b, "POST", f"/v1/photos/{pid}/export", {"directory": str(workdir)}, expect=200)
    (workdir / "out").mkdir()
    call(checker, b, "POST", "/v1/export", {"selection": {"all": True}, "directory": str(workdir / "out")}, expect=200)
    # Filters and compression in the vault.
    call(checker, b, "GET", "/v1/filters", expect=200)
    call(checker, b, "GET", f"/v1/photos/{pid}/filtered?filter=sepia", expect=200)
    call(checker, b, "GET", f"/v1/photos/{pid}/filtered?filter=polaroid", expect=400)
    made = call(checker, b, "POST", "/v1/photos/filter", {"selection": {"ids": [pid]}, "filter": "noir"}, expect=201)
    assert made[0]["original"] == pid and made[0]["photo"], made
    assert call(checker, b, "GET", f"/v1/photos/{made[0]['photo']}", expect=200)["photo"]["derivedFrom"] == pid
    call(checker, b, "POST", "/v1/export", {"selection": {"ids": [pid]}, "directory": str(workdir / "new" / "dir"),
                                            "filter": "fade"}, expect=200)
    call(checker, b, "POST", "/v1/compress", {"selection": {"ids": [pid]}, "dryRun": True}, expect=200)
    call(checker, b, "POST", "/v1/compress", {"selection": {"ids": [pid]}, "maxSide": 64, "quality": 60}, expect=200)
    # The vault's own events (photo.changed, album.changed, photo.deleted), read at the end.
    vault_events = h.UnixHTTP(b.socket)
    vault_events.request("GET", "/v1/events?kinds=photo,album")
    vault_stream = vault_events.getresponse()
    assert json.loads(vault_stream.readline())["kind"] == "ready"
    call(checker, b, "POST", "/v1/photos/batch", {"selection": {"ids": [pid]}, "action": "tag", "tags": ["sea"]}, expect=200)
    call(checker, b, "POST", "/v1/photos/batch", {"selection": {"query": {"tag": "sea"}}, "action": "favorite"}, expect=200)
    call(checker, b, "GET", "/v1/tags", expect=200)

    # Albums.
    call(checker, b, "POST", "/v1/albums/create", {"name": "Trip"}, expect=201)
    call(checker, b, "POST", "/v1/albums/add", {"album": "Trip", "selection": {"ids": [pid]}}, expect=200)
    call(checker, b, "POST", "/v1/albums/cover", {"album": "Trip", "photo": pid}, expect=200)
    call(checker, b, "POST", "/v1/albums/rename", {"album": "Trip", "name": "Sea"}, expect=200)
    call(checker, b, "POST", "/v1/albums/create", {"name": "Other"}, expect=201)
    call(checker, b, "POST", "/v1/albums/copy", {"album": "Sea", "to": "Other", "selection": {"ids": [pid]}}, expect=200)
    call(checker, b, "GET", "/v1/albums", expect=200)
    call(checker, b, "POST", "/v1/albums/remove", {"album": "Other", "selection": {"ids": [pid]}}, expect=200)
    call(checker, b, "POST", "/v1/albums/delete", {"album": "Other"}, expect=200)
    call(checker, b, "POST", "/v1/albums/create", {"name": "Diary", "passphrase": "2468"}, expect=201)
    call(checker, b, "POST", "/v1/albums/passwd", {"album": "Diary", "passphrase": "2468", "newPassphrase": "1357"}, expect=200)
    call(checker, b, "POST", "/v1/albums/passwd", {"album": "Diary", "passphrase": "2468", "newPassphrase": "1357"}, expect=403)

    # Keys for .lfs.
    call(checker, b, "POST", "/v1/keys/create", {"name": "family"}, expect=201)
    call(checker, b, "GET", "/v1/keys", expect=200)
    call(checker, b, "POST", "/v1/keys/export", {"name": "family"}, expect=200)
    call(checker, b, "POST", "/v1/keys/delete", {"name": "family", "force": True}, expect=200)

    # Imports: a folder, then one photo streamed; an upload held for a send.
    (workdir / "in").mkdir()
    (workdir / "in" / "x.jpg").write_bytes(JPG.read_bytes())
    (workdir / "in" / "notes.txt").write_text("not a photo")
    job = call(checker, a, "POST", "/v1/imports", {"paths": [str(workdir / "in")]}, expect=202)
    wait_for(lambda: call(checker, a, "GET", f"/v1/imports/{job['id']}", expect=200).get("finishedAt"), h.WAIT, "the import")
    call(checker, a, "POST", "/v1/import?name=streamed.jpg", raw=JPG.read_bytes())
    call(checker, a, "POST", "/v1/import?name=streamed.jpg&filter=fade", raw=JPG.read_bytes(), expect=201)
    upload = call(checker, a, "POST", "/v1/uploads?name=up.jpg", raw=JPG.read_bytes(), expect=201)
    call(checker, a, "POST", "/v1/send", {"peer": b.fp_prefix, "uploads": [upload["id"]]}, expect=202)

    # Backup, bundles.
    call(checker, b, "POST", "/v1/backup", {"path": str(workdir / "b.locabak")}, expect=201)
    call(checker, b, "POST", "/v1/backup", {"path": str(workdir / "id.locabak"), "withIdentity": True}, expect=201)
    call(checker, b, "POST", "/v1/bundle", {"file": str(JPG), "peer": a.fp_prefix, "output": str(workdir / "x.locaphoto")}, expect=200)
    call(checker, a, "POST", "/v1/open", {"path": str(workdir / "x.locaphoto")}, expect=200)
    call(checker, b, "POST", "/v1/bundle", {"photo": pid, "peer": a.fp_prefix, "output": str(workdir / "v.locaphoto")}, expect=200)
    call(checker, b, "POST", "/v1/bundle", {"peer": a.fp_prefix, "output": str(workdir / "n.locaphoto")}, expect=400)
    (workdir / "old.locaphoto").write_text(json.dumps({"version": "1.0", "photo": {}, "metadata": {}, "signature": ""}))
    call(checker, a, "POST", "/v1/open", {"path": str(workdir / "old.locaphoto")}, expect=400)

    # Trust, the web login, lock and unlock.
    call(checker, b, "POST", f"/v1/peers/{a.fp_prefix}/trust", expect=200)
    call(checker, b, "POST", f"/v1/peers/{a.fp_prefix}/untrust", expect=200)
    call(checker, b, "POST", "/v1/web/login", expect=200)
    call(checker, b, "POST", "/v1/lock", expect=200)
    call(checker, b, "GET", "/v1/photos", expect=423)
    assert "photoCount" not in call(checker, b, "GET", "/v1/status", expect=200)
    call(checker, b, "POST", "/v1/unlock", {"passphrase": "wrong"})
    call(checker, b, "POST", "/v1/unlock", {"passphrase": h.PASSPHRASE}, expect=200)
    call(checker, b, "POST", "/v1/passwd", {"passphrase": h.PASSPHRASE, "newPassphrase": "a new passphrase"}, expect=200)
    call(checker, b, "POST", "/v1/passwd", {"passphrase": "a new passphrase", "newPassphrase": h.PASSPHRASE}, expect=200)
    call(checker, b, "POST", f"/v1/peers/{a.fp_prefix}/forget", expect=200)

    # Photos deleted last (batch delete names them).
    call(checker, b, "POST", "/v1/photos/batch", {"selection": {"ids": [pid]}, "action": "delete"}, expect=200)
    kinds = set()
    while "photo.deleted" not in kinds:
        line = vault_stream.readline()
        assert line, f"the stream ended before photo.deleted; seen {kinds}"
        kinds.add(Checker.validate(json.loads(line), {"$ref": "#/components/schemas/ControlEvent"}, "an event")["kind"])
    vault_events.close()
    assert {"photo.changed", "album.changed"} <= kinds, kinds

    # What a relay answers.
    relay = h.Node(workdir, "r", h.unique("itr"))
    proc = subprocess.Popen([h.BIN, "relay", "run", "--home", str(relay.home), "--name", relay.name, "--listen", "127.0.0.1",
                             "--port", "0", "--open"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=h.clean_env(), start_new_session=True)
    try:
        def answers():
            try:
                return call(checker, relay.socket, "GET", "/v1/relay", expect=200)
            except (OSError, AssertionError):
                return None
        wait_for(answers, h.WAIT, "the relay to answer /v1/relay")
    finally:
        proc.terminate()
        proc.wait(timeout=h.WAIT)

    # Every operation of the document was seen answering at least once.
    seen = {(m, t) for m, t, _ in checker.seen}
    documented = {(m.upper(), t) for t, item in DOC["paths"].items() for m in ("get", "post", "put") if m in item}
    assert documented - seen == set(), f"operations this test never called: {sorted(documented - seen)}"
