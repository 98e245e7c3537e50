"""The desktop install (scripts/install.sh, files in dist/): binary, systemd user unit, .desktop
handler, shared-mime-info types, man page and completions, and --uninstall.

install.sh runs with --no-build --binary (the binary under test, no release build) into
temporary prefixes with HOME pointed at a temporary folder, as an unprivileged user when the
suite runs as root (the default prefix must not need root). The man page comes from
argument-parser's generate-manual next to the binary; the suite builds it there
(`swift build --product generate-manual`) if it is missing.

No systemd user manager can run here (systemd is not PID 1), so the unit is checked statically
with `systemd-analyze --user verify`; `systemctl --user enable --now locafoto` itself and the
credential loading are not exercised. Opening a file is exercised for real: `gio open` finds
the default application of the file's type in the installed desktop entry and launches it
against a running agent, as a file manager would."""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import lfharness as h
from lfharness import finish, fixture

INSTALL = h.REPO / "scripts" / "install.sh"
LFS_TOOL = h.REPO / "scripts" / "interop" / "lfs_tool.py"
VECTORS = h.REPO / "protocol" / "vectors"
NOBODY = 65534
PHOTO_TYPE = "application/x-locafoto-photo"
LFS_TYPE = "application/x-locafoto-lfs"


def need(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if not path:
        pytest.fail(f"{tool} not found: install the Debian package {package} (scripts/setup.sh does)", pytrace=False)
    return path


def generate_manual() -> Path:
    """argument-parser's generate-manual next to the binary under test (LOCAFOTO_BIN names the
    build's copy; conftest runs a private copy), built into that build folder if missing."""
    original = Path(os.environ["LOCAFOTO_BIN"]).absolute() if os.environ.get("LOCAFOTO_BIN") else h.REPO / ".build/debug/locafoto"
    tool = original.parent / "generate-manual"
    if os.access(tool, os.X_OK):
        return tool
    resolved = original.resolve().parent
    scratch = next((d for d in [resolved, *resolved.parents] if (d / "workspace-state.json").exists()), None)
    if scratch is None:
        pytest.fail(f"no generate-manual next to {original} and no SwiftPM build folder above it to build one in", pytrace=False)
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    config = "release" if resolved.name == "release" else "debug"
    r = subprocess.run([swift, "build", "--package-path", str(h.REPO), "--scratch-path", str(scratch), "-c", config,
                        "--product", "generate-manual"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0 and os.access(tool, os.X_OK), f"building generate-manual failed:\n{r.stdout}\n{r.stderr}"
    return tool


class Installer:
    """Runs scripts/install.sh for one temporary HOME, as uid 65534 when the suite is root."""

    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.run_dir = root / "run"      # XDG_RUNTIME_DIR without a user manager or bus in it
        tools = root / "tools"
        for d in (self.home, self.run_dir, tools):
            d.mkdir(parents=True)
        os.chmod(root, 0o755)
        os.chmod(tools, 0o755)
        # Private copies the unprivileged user can read (conftest's copy sits in a 0700 folder).
        self.binary = tools / "locafoto"
        shutil.copy2(h.BIN, self.binary)
        self.genman = tools / "generate-manual"
        shutil.copy2(generate_manual(), self.genman)
        for f in (self.binary, self.genman):
            os.chmod(f, 0o755)
        self.unprivileged = os.geteuid() == 0
        if self.unprivileged:
            need("setpriv", "util-linux")
            for d in (self.home, self.run_dir):
                os.chown(d, NOBODY, NOBODY)
        os.chmod(self.run_dir, 0o700)

    def env(self, **extra: str) -> dict[str, str]:
        env = h.clean_env()
        for k in ("DBUS_SESSION_BUS_ADDRESS", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "DESTDIR"):
            env.pop(k, None)
        env.update(HOME=str(self.home), XDG_RUNTIME_DIR=str(self.run_dir), **extra)
        return env

    def run(self, *args: str, check: bool = True, **extra_env: str) -> subprocess.CompletedProcess:
        argv = ["bash", str(INSTALL), *args]
        if self.unprivileged:
            argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *argv]
        r = subprocess.run(argv, env=self.env(**extra_env), capture_output=True, text=True, timeout=300, cwd=self.root)
        if check:
            assert r.returncode == 0, f"install.sh {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
        return r

    def install(self, prefix: Path, *more: str, **extra_env: str) -> subprocess.CompletedProcess:
        return self.run("--no-build", "--binary", str(self.binary), "--generate-manual", str(self.genman),
                        "--prefix", str(prefix), *more, **extra_env)


def expected_files(prefix: Path, unit_dir: Path) -> dict[Path, int]:
    share = prefix / "share"
    pages = {share / "man/man1" / name: 0o644 for name in man_pages()}
    return pages | {
        prefix / "bin/locafoto": 0o755,
        prefix / "lib/locafoto/locafoto-open-file": 0o755,
        share / "applications/locafoto.desktop": 0o644,
        share / "applications/locafoto-web.desktop": 0o644,
        share / "mime/packages/locafoto.xml": 0o644,
        share / "man/man1/locafoto.1": 0o644,
        share / "bash-completion/completions/locafoto": 0o644,
        share / "zsh/site-functions/_locafoto": 0o644,
        share / "fish/vendor_completions.d/locafoto.fish": 0o644,
        unit_dir / "locafoto.service": 0o644,
    }


def all_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if not p.is_dir()}


FOREIGN_DESKTOP = """[Desktop Entry]
Type=Application
Name=Other viewer
Exec=true %f
MimeType=image/png;
"""
FOREIGN_MIME = """<?xml version="1.0" encoding="UTF-8"?>
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="application/x-other-test"><comment>other</comment><glob pattern="*.othertest"/></mime-type>
</mime-info>
"""


def with_foreign_files(prefix: Path) -> Path:
    """`prefix` holding another program's desktop entry and MIME package, as a user's
    ~/.local does."""
    share = prefix / "share"
    (share / "applications").mkdir(parents=True)
    (share / "mime/packages").mkdir(parents=True)
    (share / "applications/other.desktop").write_text(FOREIGN_DESKTOP)
    (share / "mime/packages/other.xml").write_text(FOREIGN_MIME)
    return prefix


@pytest.fixture(scope="module")
def installed():
    """A user install into ~/.local of a temporary HOME that already holds another program's
    desktop entry and MIME package (which must survive; see test_uninstall)."""
    root = Path(tempfile.mkdtemp(prefix="lfinst", dir="/tmp"))
    inst = Installer(root)
    prefix = with_foreign_files(inst.home / ".local")
    if inst.unprivileged:
        for p in [inst.home, *inst.home.rglob("*")]:
            os.chown(p, NOBODY, NOBODY)
    out = inst.install(prefix)
    yield inst, prefix, inst.home / ".config/systemd/user", out
    if not os.environ.get("LOCAFOTO_KEEP_TMP"):
        shutil.rmtree(root, ignore_errors=True)


def mime_env(inst: Installer, prefix: Path) -> dict[str, str]:
    env = inst.env(XDG_DATA_HOME=str(prefix / "share"), XDG_DATA_DIRS="/usr/share", XDG_CURRENT_DESKTOP="GNOME")
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env


def content_type(path: Path, env: dict[str, str]) -> str:
    """The type GIO (what GNOME's file manager and xdg-open use) gives the file: by name, then
    by its first bytes (shared-mime-info magic)."""
    r = subprocess.run([need("gio", "libglib2.0-bin"), "info", "-a", "standard::content-type", str(path)],
                       env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    m = re.search(r"standard::content-type: (\S+)", r.stdout)
    assert m, r.stdout
    return m.group(1)


def xdg_filetype(path: Path, env: dict[str, str]) -> str:
    r = subprocess.run([need("xdg-mime", "xdg-utils"), "query", "filetype", str(path)], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@functools.cache
def man_pages() -> frozenset[str]:
    """The overview, locafoto.1, and a page per command path: locafoto-send.1,
    locafoto-album-create.1, …"""
    names = {"locafoto.1"}
    for command, children in subcommands().items():
        names.add(f"locafoto-{command}.1")
        names |= {f"locafoto-{command}-{child}.1" for child in children if child != "help"}
    return frozenset(names)


@functools.cache
def subcommands() -> dict[str, list[str]]:
    """Every command path of the CLI, read from its --help texts (not from the dump that
    generate-manual uses): {"vault": ["init"], "agent": [], ...}."""
    def listed(*path: str) -> list[str]:
        r = subprocess.run([h.BIN, *path, "--help"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        # Every "… SUBCOMMANDS:" section: the top level lists its commands in groups.
        names = []
        for section in r.stdout.split("SUBCOMMANDS:")[1:]:
            for line in section.splitlines()[1:]:
                if not line.strip():
                    break
                m = re.match(r"^ {2}(\S+)", line)
                if m:
                    names.append(m.group(1))
        return names

    top = listed()
    assert len(top) > 20 and "open" in top and "agent" in top, top
    return {name: listed(name) for name in top if name != "help"}


# --- tests ----------------------------------------------------------------------------------

def test_files_in_place_with_modes(installed):
    inst, prefix, unit_dir, out = installed
    expected = expected_files(prefix, unit_dir)
    wrong = []
    for path, mode in expected.items():
        if not path.is_file() or path.is_symlink():
            wrong.append(f"{path}: missing")
        elif stat.S_IMODE(path.stat().st_mode) != mode:
            wrong.append(f"{path}: mode {oct(stat.S_IMODE(path.stat().st_mode))}, expected {oct(mode)}")
        elif path != prefix / "bin/locafoto" and re.search(r"@[A-Z]+@", path.read_text()):
            wrong.append(f"{path}: a placeholder was not filled in")
    assert not wrong, "\n".join(wrong) + f"\n--- install output ---\n{out.stdout}{out.stderr}"
    assert (prefix / "bin/locafoto").read_bytes() == inst.binary.read_bytes()
    if inst.unprivileged:
        assert (prefix / "bin/locafoto").stat().st_uid == NOBODY, "the install did not run unprivileged"
    # The packaged MIME description is the one in dist/.
    assert (prefix / "share/mime/packages/locafoto.xml").read_text() == (h.REPO / "dist/locafoto-mime.xml").read_text()
    # The opener runs the installed binary.
    assert f"locafoto='{prefix}/bin/locafoto'" in (prefix / "lib/locafoto/locafoto-open-file").read_text()
    # No user manager here: the script says what to run instead of running it.
    assert "systemctl --user enable --now locafoto" in out.stdout, out.stdout
    assert "systemctl --user daemon-reload" in out.stdout, out.stdout


def test_unit_passes_systemd_analyze_verify(installed):
    """Statically: no user manager can run in this container (systemd is not PID 1)."""
    inst, prefix, unit_dir, _ = installed
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        pytest.skip("systemd-analyze not found (Debian package systemd; scripts/setup.sh installs it)")
    unit = unit_dir / "locafoto.service"
    text = unit.read_text()
    service = text.split("[Service]", 1)[1].split("[Install]", 1)[0]
    lines = [line for line in service.splitlines() if line and not line.startswith("#")]
    exec_start = [line for line in lines if line.startswith("ExecStart=")]
    assert exec_start == [f"ExecStart={prefix}/bin/locafoto agent --passphrase-file ${{CREDENTIALS_DIRECTORY}}/vault-passphrase"], exec_start
    assert "LoadCredential=vault-passphrase:%E/locafoto/vault-passphrase" in lines, lines
    assert "WantedBy=default.target" in text

    # MANPATH: verify runs `man` for Documentation=man:locafoto-agent(1) man:locafoto(1), which must find the installed pages.
    env = inst.env(MANPATH=str(prefix / "share/man"))

    def verify(path: Path) -> subprocess.CompletedProcess:
        return subprocess.run([analyze, "--user", "verify", str(path)], env=env, capture_output=True, text=True, timeout=60)

    r = verify(unit)
    assert r.returncode == 0 and not r.stderr.strip() and not r.stdout.strip(), f"systemd-analyze verify:\n{r.stdout}{r.stderr}"
    # The check is live here: a unit naming a missing binary fails it.
    broken = inst.root / "broken" / "locafoto.service"
    broken.parent.mkdir(exist_ok=True)
    broken.write_text(text.replace(f"{prefix}/bin/locafoto agent", f"{prefix}/bin/missing agent"))
    r = verify(broken)
    assert r.returncode != 0 and "missing" in r.stderr, f"systemd-analyze accepted a unit with a missing binary:\n{r.stderr}"


def valid_desktop_entry(path: Path) -> dict[str, str]:
    """The entry's keys, once desktop-file-validate has nothing to say about it (not even a hint)."""
    r = subprocess.run([need("desktop-file-validate", "desktop-file-utils"), str(path)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), f"desktop-file-validate:\n{r.stdout}{r.stderr}"
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def test_desktop_entry_validates_and_handles_both_types(installed):
    inst, prefix, _, _ = installed
    entry = valid_desktop_entry(prefix / "share/applications/locafoto.desktop")
    assert set(filter(None, entry["MimeType"].split(";"))) == {PHOTO_TYPE, LFS_TYPE}
    assert entry["Exec"] == f"{prefix}/lib/locafoto/locafoto-open-file %F", entry["Exec"]
    assert entry["TryExec"] == f"{prefix}/bin/locafoto"
    env = mime_env(inst, prefix)
    for mime in (PHOTO_TYPE, LFS_TYPE):
        r = subprocess.run([need("xdg-mime", "xdg-utils"), "query", "default", mime], env=env, capture_output=True, text=True, timeout=30)
        assert r.stdout.strip() == "locafoto.desktop", f"default application for {mime}: {r.stdout!r} {r.stderr!r}"


def test_launcher_opens_the_web_app(installed):
    """A menu entry people find (the handler above is NoDisplay): it runs `locafoto web --open`."""
    _, prefix, _, _ = installed
    entry = valid_desktop_entry(prefix / "share/applications/locafoto-web.desktop")
    assert entry.get("NoDisplay", "false") == "false" and entry["Name"] == "Locafoto", entry
    assert entry["Exec"] == f"{prefix}/bin/locafoto web --open", entry["Exec"]
    assert "Network" in entry["Categories"].split(";"), entry
    # What it runs works: `web --open` against no agent says what to do (exit 69), not a crash.
    r = subprocess.run(entry["Exec"].split(), capture_output=True, text=True, timeout=30,
                       env={**h.clean_env(), "LOCAFOTO_HOME": str(prefix / "no-such-home")})
    assert r.returncode == 69 and "agent" in r.stderr, r


def test_mime_types_by_glob_and_magic(installed, tmp_path):
    inst, prefix, _, _ = installed
    env = mime_env(inst, prefix)
    vector = json.loads((VECTORS / "bundle.json").read_text())["vectors"][0]["file"]
    doc = json.loads(vector)
    lfs_bytes = bytes.fromhex(json.loads((VECTORS / "lfs.json").read_text())["valid"][0]["file"])
    files = {
        # the seed's key order ("version" first) and Locafoto's own (sorted, Foundation's spacing)
        "seed.locaphoto": (vector, PHOTO_TYPE),
        "seed-renamed": (vector, PHOTO_TYPE),
        "sorted-renamed": (json.dumps(doc, indent=2, sort_keys=True, separators=(",", " : ")), PHOTO_TYPE),
        "compact-renamed": (json.dumps(doc, separators=(",", ":")), PHOTO_TYPE),
        "photo.lfs": (lfs_bytes, LFS_TYPE),
        "PHOTO.LFS": (lfs_bytes, LFS_TYPE),
        # .lfs has no magic (a key name, then NUL padding): without its extension it is not claimed
        "lfs-renamed": (lfs_bytes, "application/octet-stream"),
        # the magic does not claim other JSON
        "other.json": ('{"version": "2.0", "photo": {"id": "x"}}', "application/json"),
        "other-renamed": ('{"version": "2.0", "photo": {"id": "x"}}', "text/plain"),
    }
    wrong = []
    for name, (content, want) in files.items():
        p = tmp_path / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
        got = content_type(p, env)
        if got != want:
            wrong.append(f"{name}: gio says {got}, expected {want}")
        elif want in (PHOTO_TYPE, LFS_TYPE) and (x := xdg_filetype(p, env)) != want:
            wrong.append(f"{name}: xdg-mime says {x}, expected {want}")
    assert not wrong, "\n".join(wrong)
    # Without the installed database none of this holds (the check depends on our package).
    assert content_type(tmp_path / "seed.locaphoto", inst.env(XDG_DATA_HOME=str(tmp_path), XDG_DATA_DIRS="/usr/share")) != PHOTO_TYPE


def test_man_pages_render_one_per_command(installed):
    """A short overview, locafoto(1), naming a page per command (locafoto-send(1) …); each
    renders without a warning, says what its command is, and gives the exit table the CLI
    keeps (not mdoc's generic "0 on success, >0 on error")."""
    _, prefix, _, _ = installed
    man1 = prefix / "share/man/man1"
    assert {p.name for p in man1.iterdir()} == set(man_pages()), sorted({p.name for p in man1.iterdir()} ^ set(man_pages()))

    def render(page: Path) -> str:
        r = subprocess.run([need("man", "man-db"), "-l", str(page)], env={**os.environ, "MANWIDTH": "200"},
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and not r.stderr.strip(), f"man -l {page.name} failed or warned:\n{r.stderr}"
        return re.sub(r".\x08", "", r.stdout)

    overview = render(man1 / "locafoto.1")
    assert re.search(r"^LOCAFOTO\(1\)", overview, re.M), overview[:300]
    assert len(overview.splitlines()) < 150, "the overview is short: each command has its own page"
    for command in subcommands():
        assert f"locafoto-{command}(1)" in overview, f"the overview does not point to locafoto-{command}(1)"
    paths = [[c] for c in subcommands()] + [[c, child] for c, children in subcommands().items() for child in children if child != "help"]
    for path in paths:
        name = "locafoto-" + "-".join(path) + ".1"
        text = render(man1 / name)
        title = "LOCAFOTO-" + "-".join(path).upper()
        assert re.search(rf"^{re.escape(title)}\(1\)", text, re.M), f"{name}: title\n{text[:200]}"
        assert "locafoto " + " ".join(path) in text, f"{name} does not name `locafoto {' '.join(path)}`"
        assert "66 not found" in text and "exits 0 on success" not in text, f"{name}: exit status\n{text[-600:]}"
        assert "locafoto(1)" in text, f"{name} does not point back to the overview"


def test_bash_completion_completes_subcommands(installed):
    _, prefix, _, _ = installed
    script = prefix / "share/bash-completion/completions/locafoto"

    def complete(line: str) -> list[str]:
        words = line.split(" ")
        program = f"""
            source {json.dumps(str(script))} || exit 9
            complete -p locafoto >/dev/null || exit 8
            COMP_LINE={json.dumps(line)}; COMP_POINT=${{#COMP_LINE}}
            COMP_WORDS=({" ".join(json.dumps(w) for w in words)}); COMP_CWORD={len(words) - 1}
            _locafoto locafoto {json.dumps(words[-1])} {json.dumps(words[-2])}
            printf '%s\\n' "${{COMPREPLY[@]}}"
        """
        r = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True, timeout=30,
                           env={**os.environ, "PATH": f"{prefix}/bin:{os.environ['PATH']}"})
        assert r.returncode == 0, f"completing {line!r}: status {r.returncode}\n{r.stderr}"
        return [w for w in r.stdout.splitlines() if w]

    top = set(subcommands())
    offered = set(complete("locafoto "))
    assert top <= offered, f"`locafoto <TAB>` does not offer: {sorted(top - offered)}"
    assert complete("locafoto ke") == ["key"]
    assert set(complete("locafoto vault ")) >= {"init"}
    zsh_script = prefix / "share/zsh/site-functions/_locafoto"
    fish_script = prefix / "share/fish/vendor_completions.d/locafoto.fish"
    assert zsh_script.read_text().startswith("#compdef locafoto")
    assert "complete -c 'locafoto'" in fish_script.read_text()
    # Their syntax, where those shells are installed (scripts/setup.sh does not install them).
    for shell, path in (("zsh", zsh_script), ("fish", fish_script)):
        if shutil.which(shell):
            r = subprocess.run([shell, "-n", str(path)], capture_output=True, text=True, timeout=30)
            assert r.returncode == 0, f"{shell} -n {path}:\n{r.stderr}"


def test_opening_a_file_imports_it(installed, make_node, workdir):
    """`gio open FILE` (what a file manager does) launches the installed handler, which imports a
    .locaphoto bundle (even renamed without its extension: found by magic) and a .lfs file
    into the running agent's vault."""
    inst, prefix, _, _ = installed
    a = make_node("a", start=False)
    b = make_node("b", start=False)
    a.start("--no-discovery", wait_discovery=False)
    b.start("--no-discovery", wait_discovery=False)
    # One handshake (a rejected offer) gives A B's key, so that A can seal a bundle for B.
    sender = a.popen("send", f"127.0.0.1:{b.port}", str(fixture("sample.png")))
    b.run("reject", b.wait_offer()["id"][:8])
    finish(sender)
    bundle = workdir / "from a.locaphoto"
    a.run("bundle", str(fixture("sample.jpg")), "--to", b.fp_prefix, "-o", str(bundle))
    renamed = workdir / "from-a-renamed"
    shutil.copy(bundle, renamed)
    b.run("key", "create", "family")
    b.run("key", "export", "family", "-o", str(workdir / "family.hex"), json=False)
    lfs = workdir / "holiday photo.lfs"
    subprocess.run([sys.executable, str(LFS_TOOL), "encrypt", "--key-hex-file", str(workdir / "family.hex"), "--name", "family",
                    str(fixture("sample.png")), str(lfs)], check=True, capture_output=True)

    env = mime_env(inst, prefix)
    env["LOCAFOTO_HOME"] = str(b.home)
    env.pop("XDG_RUNTIME_DIR")   # the agent's socket is then <home>/agent.sock, as the harness runs it
    assert content_type(bundle, env) == PHOTO_TYPE
    assert content_type(renamed, env) == PHOTO_TYPE
    assert content_type(lfs, env) == LFS_TYPE

    gio = need("gio", "libglib2.0-bin")
    for n, f in enumerate((renamed, lfs), start=1):
        r = subprocess.run([gio, "open", str(f)], env=env, capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"gio open {f.name}: {r.stderr}"
        photos = h.wait_for(lambda: (lambda p: p if len(p) == n else None)(b.photos()), timeout=30,
                            what=f"`gio open {f.name}` to import a photo")
    by_format = {p["format"]: p for p in photos}
    assert set(by_format) == {"jpeg", "png"}, photos
    assert by_format["jpeg"]["sender"]["fingerprint"] == a.fingerprint
    assert h.export_bytes(b, by_format["jpeg"]["id"], workdir / "x1") == fixture("sample.jpg").read_bytes()
    assert h.export_bytes(b, by_format["png"]["id"], workdir / "x2") == fixture("sample.png").read_bytes()

    # A failure reaches the user: the handler exits non-zero with the agent's reason (A cannot open B's bundle).
    env["LOCAFOTO_HOME"] = str(a.home)
    r = subprocess.run([str(prefix / "lib/locafoto/locafoto-open-file"), str(bundle)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "addressed to another node" in r.stderr, f"status {r.returncode}: {r.stderr}"
    assert a.photos() == []


def test_uninstall_removes_exactly_what_was_installed(tmp_path):
    root = Path(tempfile.mkdtemp(prefix="lfuninst", dir="/tmp"))
    try:
        inst = Installer(root)
        # A user prefix shared with another program: its files stay, the databases forget Locafoto.
        prefix = with_foreign_files(inst.home / ".local")
        share = prefix / "share"
        # A system-style prefix (outside HOME): the unit goes under it; nothing else is there.
        system = root / "usr-local"
        system.mkdir()
        if inst.unprivileged:
            for p in [inst.home, system, *inst.home.rglob("*")]:
                os.chown(p, NOBODY, NOBODY)
        before_home = all_files(inst.home)
        inst.install(prefix)
        inst.install(system)
        unit_link = inst.home / ".config/systemd/user/default.target.wants/locafoto.service"
        unit_link.parent.mkdir()
        unit_link.symlink_to(inst.home / ".config/systemd/user/locafoto.service")   # what `systemctl --user enable` leaves
        if inst.unprivileged:
            os.chown(unit_link.parent, NOBODY, NOBODY)
            os.lchown(unit_link, NOBODY, NOBODY)
        for path in expected_files(system, system / "lib/systemd/user"):
            assert path.is_file(), f"{path} not installed"
        assert (share / "mime/mime.cache").exists()

        inst.run("--uninstall", "--prefix", str(prefix))
        inst.run("--uninstall", "--prefix", str(system))
        left = all_files(inst.home)
        generated = {share / "applications/mimeinfo.cache"} | {p for p in all_files(share / "mime") if p.parent.name != "packages"}
        assert left - generated == before_home, f"left behind: {sorted(map(str, left - generated - before_home))}"
        for p in generated & left:
            assert "locafoto" not in p.read_bytes().decode("utf-8", "replace"), f"{p} still names Locafoto"
        assert (share / "mime/application/x-other-test.xml").exists(), "the other program's MIME type was dropped"
        assert not (inst.home / ".config/systemd").exists(), "empty unit folders were left"
        assert all_files(system) == set(), f"left behind: {sorted(map(str, all_files(system)))}"
        # Uninstalling twice is harmless.
        inst.run("--uninstall", "--prefix", str(system))
    finally:
        if not os.environ.get("LOCAFOTO_KEEP_TMP"):
            shutil.rmtree(root, ignore_errors=True)


def test_destdir_stages_without_registering():
    root = Path(tempfile.mkdtemp(prefix="lfdest", dir="/tmp"))
    try:
        inst = Installer(root)
        stage = root / "stage"
        stage.mkdir()
        if inst.unprivileged:
            os.chown(stage, NOBODY, NOBODY)
        inst.install(Path("/usr"), DESTDIR=str(stage))
        want = {stage / str(p).lstrip("/") for p in expected_files(Path("/usr"), Path("/usr/lib/systemd/user"))}
        assert all_files(stage) == want, f"unexpected: {sorted(map(str, all_files(stage) ^ want))}"
        unit = (stage / "usr/lib/systemd/user/locafoto.service").read_text()
        assert "ExecStart=/usr/bin/locafoto agent" in unit and str(stage) not in unit
        assert "Exec=/usr/lib/locafoto/locafoto-open-file %F" in (stage / "usr/share/applications/locafoto.desktop").read_text()
        inst.run("--uninstall", "--prefix", "/usr", DESTDIR=str(stage))
        assert all_files(stage) == set()
    finally:
        if not os.environ.get("LOCAFOTO_KEEP_TMP"):
            shutil.rmtree(root, ignore_errors=True)
