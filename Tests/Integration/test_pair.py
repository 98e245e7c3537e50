"""`locafoto pair`: both sides of a fresh handshake show the same code."""
import lfharness as h


def test_pairing_codes_match(make_node):
    a = make_node("a", name=h.unique("itpa"))
    b = make_node("b", name=h.unique("itpb"))
    a.wait_sees(b)
    mine = a.run("pair", b.name)
    assert mine["fingerprint"] == b.fingerprint and len(mine["code"]) == 7, mine
    theirs = {e["fingerprint"]: e for e in b.run("pair")}
    assert theirs[a.fingerprint]["code"] == mine["code"]
    text = a.run("pair", b.fingerprint.split("-")[0], json=False).output
    assert "pairing code with" in text and "locafoto trust" in text
    assert b.inbox() == []
