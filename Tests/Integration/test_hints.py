"""Every command a message or help text tells the user to run exists, with the options it names
(issue 10 §2: no hint naming `locafoto photos` or `export --all`). The hints are read from the
sources (backticked `locafoto …` in Swift string literals) and checked against the real CLI's
--help, so a renamed command or option fails here instead of misleading a user."""

import re
import subprocess
from functools import lru_cache

import lfharness as h

HINT = re.compile(r"`locafoto ([^`]+)`")


@lru_cache(maxsize=None)
def help_text(path: tuple[str, ...]) -> str | None:
    p = subprocess.run([h.BIN, *path, "--help"], capture_output=True, text=True, env=h.clean_env())
    return p.stdout if p.returncode == 0 else None


def subcommands(text: str) -> set[str]:
    # "SUBCOMMANDS:" or, where commands are grouped, "SHARING SUBCOMMANDS:" and the like.
    names, inside = set(), False
    for line in text.splitlines():
        if re.match(r"^([A-Z][A-Z ,]* )?SUBCOMMANDS:$", line):
            inside = True
            continue
        if inside:
            if line and not line.startswith(" "):
                break
            m = re.match(r"\s{2}(\S+)", line)
            if m and line.startswith("  ") and not line.startswith("    " * 3):
                names.add(m.group(1))
    return names


def check(hint: str) -> str | None:
    """None if `locafoto HINT` names a real command and real options; else what is wrong."""
    words = hint.replace("…", " ").split()
    path: list[str] = []
    text = help_text(())
    for w in words:
        if w.startswith("-") or not re.fullmatch(r"[a-z][a-z-]*", w):
            break
        if w in subcommands(text):
            path.append(w)
            text = help_text(tuple(path))
            assert text is not None
        else:
            break
    if not path and not words[0].startswith("-"):
        return f"`locafoto {hint}`: no command '{words[0]}'"
    # A command with a default subcommand (`relay` runs `relay run`) takes its options too.
    default = re.search(r"^\s{2}(\S+) \(default\)", text, re.M)
    if default:
        text += help_text(tuple(path + [default.group(1)])) or ""
    for w in words:
        option = re.match(r"(--[a-z][a-z-]*)", w)
        if option and option.group(1) not in text:
            return f"`locafoto {hint}`: `locafoto {' '.join(path)}` has no option {option.group(1)}"
    return None


def test_every_hint_names_a_real_command_and_options():
    hints = {}
    for source in (h.REPO / "Sources").rglob("*.swift"):
        for n, line in enumerate(source.read_text().splitlines(), 1):
            for m in HINT.finditer(line):
                hints.setdefault(m.group(1), f"{source.relative_to(h.REPO)}:{n}")
    assert len(hints) > 30, f"the hints were not found: {hints}"
    wrong = [f"{where}: {problem}" for hint, where in sorted(hints.items()) if (problem := check(hint))]
    assert not wrong, "hints that mislead:\n" + "\n".join(wrong)


def test_the_checker_catches_a_wrong_hint():
    assert check("photos") is not None
    assert check("export --all") is not None
    assert check("list --album A") is None
    assert check("relay --allow FP") is None
