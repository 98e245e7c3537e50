#!/usr/bin/env bash
# Interoperability test: an independent Python sender (scripts/interop/python_peer.py, written
# from protocol/*.md only) sends photos to a real `locafoto agent`.
#
#   scripts/interop/test_python_peer.sh            # uses .build/debug/locafoto
#   LOCAFOTO_BIN=/path/to/locafoto scripts/interop/test_python_peer.sh
#
# Builds nothing. Needs python3 with noiseprotocol, pynacl and cryptography
# (python3 -m pip install noiseprotocol pynacl cryptography). No mDNS needed (--no-discovery).
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=${LOCAFOTO_BIN:-.build/debug/locafoto}
[[ $BIN == /* ]] || BIN=$ROOT/$BIN
PEER=$ROOT/scripts/interop/python_peer.py
FIX=$ROOT/Tests/LocafotoFormatsTests/Fixtures
PY=${PYTHON:-python3}

[[ -x $BIN ]] || { echo "interop: $BIN not found; run 'swift build' first (or set LOCAFOTO_BIN)" >&2; exit 2; }
$PY -c 'import noise, nacl, cryptography' 2>/dev/null || {
    echo "interop: python3 needs noiseprotocol, pynacl, cryptography (python3 -m pip install noiseprotocol pynacl cryptography)" >&2
    exit 2
}

unset XDG_RUNTIME_DIR          # the control socket is then <home>/agent.sock
unset LOCAFOTO_SOCKET LOCAFOTO_HOME LOCAFOTO_PASSPHRASE_FILE

START=$(date +%s.%N)
T=$(mktemp -d "${TMPDIR:-/tmp}/locafoto-interop.XXXXXX")
H=$T/home
P=$T/passphrase
AGENT_LOG=$T/agent.log
AGENT_PID=
PEER_PID=
printf 'interop passphrase %s\n' "$$" >"$P"
chmod 600 "$P"

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n $PEER_PID ]] && kill -0 "$PEER_PID" 2>/dev/null; then
        kill "$PEER_PID" 2>/dev/null || true
        wait "$PEER_PID" 2>/dev/null || true
    fi
    if [[ -n $AGENT_PID ]] && kill -0 "$AGENT_PID" 2>/dev/null; then
        kill -TERM "$AGENT_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$AGENT_PID" 2>/dev/null; then
            echo "interop: agent did not stop on SIGTERM within 10 s; killing it" >&2
            kill -KILL "$AGENT_PID" 2>/dev/null || true
        fi
        wait "$AGENT_PID" 2>/dev/null || true
    fi
    if [[ $rc -ne 0 ]]; then
        echo "interop: FAIL (exit $rc)" >&2
        echo "----- agent log ($AGENT_LOG) -----" >&2
        cat "$AGENT_LOG" >&2 2>/dev/null || true
        echo "----- python peer output -----" >&2
        for f in "$T"/peer-*.out; do [[ -e $f ]] && { echo "== $f" >&2; cat "$f" >&2; }; done
        echo "----- end -----" >&2
    fi
    rm -rf "$T"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() { echo "interop: FAIL: $*" >&2; exit 1; }
step() { echo "interop: $*"; }
lf() { "$BIN" "$@" --home "$H"; }
json() {  # json PYTHON-EXPR < json  (the document is `d`)
    $PY -c "import json,sys; d=json.load(sys.stdin); r=($1); print(r if not isinstance(r,(list,dict)) else json.dumps(r))"
}
wait_until() {  # wait_until SECONDS COMMAND...
    local deadline=$(( $(date +%s) + $1 )); shift
    until "$@"; do
        (( $(date +%s) < deadline )) || return 1
        sleep 0.2
    done
}

# --- node ------------------------------------------------------------------------------------
step "vault init"
lf vault init --passphrase-file "$P" --kdf interactive >/dev/null

step "starting agent"
"$BIN" agent --home "$H" --name "interop-$$" --listen 127.0.0.1 --port 0 \
    --passphrase-file "$P" --no-discovery >"$AGENT_LOG" 2>&1 &
AGENT_PID=$!

agent_up() { lf status --json >"$T/status.json" 2>/dev/null && [[ $(json 'd["vault"]' <"$T/status.json") == unlocked ]]; }
wait_until 30 agent_up || fail "agent did not come up with an unlocked vault"
PORT=$(json 'd["port"]' <"$T/status.json")
AGENT_FP=$(json 'd["fingerprint"]' <"$T/status.json")
[[ $PORT =~ ^[0-9]+$ && $PORT -gt 0 ]] || fail "bad port '$PORT' in status"
step "agent interop-$$ [$AGENT_FP] on 127.0.0.1:$PORT"

SEED=$T/pypeer.seed
PY_FP=$($PY "$PEER" fingerprint --seed-file "$SEED" 2>/dev/null | sed -n 's/^fingerprint: //p')
[[ -n $PY_FP ]] || fail "python peer did not print its fingerprint"
[[ $(stat -c %a "$SEED") == 600 ]] || fail "seed file mode is $(stat -c %a "$SEED"), not 600"
step "python peer [$PY_FP]"

# Run the python peer in the background: peer_start NAME ARGS...; peer_wait sets PEER_RC.
peer_start() {
    local name=$1; shift
    PEER_OUT=$T/peer-$name.out
    timeout 180 $PY "$PEER" send --host 127.0.0.1 --port "$PORT" --name pypeer --seed-file "$SEED" "$@" \
        >"$PEER_OUT" 2>&1 &
    PEER_PID=$!
}
peer_wait() {
    PEER_RC=0
    wait "$PEER_PID" || PEER_RC=$?
    PEER_PID=
}
offer_count() { lf inbox --json --all | json 'len(d)'; }
pending_offer_from() {  # prints the id of the pending offer from fingerprint $1 (if exactly one)
    lf inbox --json | json "[o['id'] for o in d if o['sender']['fingerprint']=='$1' and o['state']=='pending']" \
        | $PY -c 'import json,sys; ids=json.load(sys.stdin); print(ids[0] if len(ids)==1 else "")'
}
accept_offer() {  # wait for the pending offer from the python peer and accept it
    local id=
    have_offer() { id=$(pending_offer_from "$PY_FP"); [[ -n $id ]]; }
    wait_until 30 have_offer || fail "no offer from the python peer arrived in the inbox"
    step "accepting offer $id"
    lf accept --no-wait "$id" >/dev/null  # the peer's outcome is checked below, case by case
}
photo_count() { lf list --json | json 'len(d)'; }

# --- (a) two photos, accepted, exported bit for bit --------------------------------------------
step "(a) send sample.jpg + sample.png, accept, export, compare"
peer_start a "$FIX/sample.jpg" "$FIX/sample.png" --expect-fingerprint "$AGENT_FP"
accept_offer
peer_wait
[[ $PEER_RC -eq 0 ]] || fail "(a) python peer exited $PEER_RC, expected 0"
grep -q "^fingerprint: $PY_FP\$" "$PEER_OUT" || fail "(a) python peer printed another fingerprint"
[[ $(grep -c ': imported photo=' "$PEER_OUT") -eq 2 ]] || fail "(a) python peer did not report 2 imported items"

lf list --json >"$T/list.json"
[[ $(json 'len(d)' <"$T/list.json") -eq 2 ]] || fail "(a) vault has $(json 'len(d)' <"$T/list.json") photos, expected 2"
[[ $(json "sum(1 for p in d if (p.get('sender') or {}).get('fingerprint')=='$PY_FP')" <"$T/list.json") -eq 2 ]] \
    || fail "(a) photos do not carry sender.fingerprint $PY_FP: $(cat "$T/list.json")"
mkdir -p "$T/export"
for orig in sample.jpg sample.png; do
    id=$(json "[p['id'] for p in d if p.get('name')=='$orig'][0]" <"$T/list.json")
    # the python peer's own report must name the same photo id the vault shows
    grep -q "$orig: imported photo=$id\$" "$PEER_OUT" || fail "(a) photo id of $orig differs between ITEM_RESULT and the vault"
    out=$(lf export "$id" "$T/export" --json | json 'd["path"]')
    [[ -f $out ]] || fail "(a) export of $orig did not write a file ($out)"
    cmp "$FIX/$orig" "$out" || fail "(a) exported $orig differs from the original"
    step "(a) $orig -> photo $id, exported copy identical"
done

# --- (b) tampered tag: the receiver refuses the item -------------------------------------------
step "(b) send sample.jpg with a corrupted AEAD tag"
peer_start b "$FIX/sample.jpg" --expect-fingerprint "$AGENT_FP" --tamper tag
accept_offer
peer_wait
[[ $PEER_RC -eq 1 ]] || fail "(b) python peer exited $PEER_RC, expected 1"
grep -Eq '^item 0 sample.jpg: failed code=(9|8) ' "$PEER_OUT" || fail "(b) item not reported failed with code 9 or 8"
step "(b) $(grep '^item 0' "$PEER_OUT")"
[[ $(photo_count) -eq 2 ]] || fail "(b) vault has $(photo_count) photos after a tampered item, expected 2"
if [[ -d $H/spool ]] && [[ -n $(find "$H/spool" -type f) ]]; then
    fail "(b) spool files remain after a refused item: $(find "$H/spool" -type f)"
fi

# --- (c) pinning: wrong expected fingerprint ----------------------------------------------------
step "(c) wrong --expect-fingerprint"
WRONG_FP=$($PY "$PEER" fingerprint --seed-file "$T/other.seed" 2>/dev/null | sed -n 's/^fingerprint: //p')
[[ -n $WRONG_FP && $WRONG_FP != "$AGENT_FP" ]] || fail "(c) could not make another fingerprint"
before=$(offer_count)
peer_start c "$FIX/sample.jpg" --expect-fingerprint "$WRONG_FP"
peer_wait
[[ $PEER_RC -eq 3 ]] || fail "(c) python peer exited $PEER_RC, expected 3"
grep -q 'pinning failed' "$PEER_OUT" || fail "(c) python peer did not say why it refused"
sleep 0.5
after=$(offer_count)
[[ $after -eq $before ]] || fail "(c) an offer reached the inbox ($before -> $after)"
[[ $(lf status --json | json 'd["pendingOffers"]') -eq 0 ]] || fail "(c) pendingOffers is not 0"

# --- (d) policy off: DECISION rejected, code 3 --------------------------------------------------
step "(d) policy off"
lf policy off >/dev/null
[[ $(lf policy --json | json 'd["policy"] if isinstance(d,dict) else d') == off ]] || fail "(d) policy is not off"
peer_start d "$FIX/sample.jpg" --expect-fingerprint "$AGENT_FP"
peer_wait
[[ $PEER_RC -eq 1 ]] || fail "(d) python peer exited $PEER_RC, expected 1"
grep -q '^decision: rejected code=3 ' "$PEER_OUT" || fail "(d) no rejection with code 3"
step "(d) $(grep '^decision:' "$PEER_OUT")"
[[ $(photo_count) -eq 2 ]] || fail "(d) vault has $(photo_count) photos, expected 2"
lf policy everyone >/dev/null

# --- (e) an offer without hashes (cap late-hash): imported, hashed by the agent itself ----------
step "(e) send sample.webp + sample.gif with no hash in the offer (the agent announced late-hash)"
peer_start e "$FIX/sample.webp" "$FIX/sample.gif" --expect-fingerprint "$AGENT_FP" --omit-hashes
accept_offer
peer_wait
[[ $PEER_RC -eq 0 ]] || fail "(e) python peer exited $PEER_RC, expected 0"
grep -q '^hashes: omitted' "$PEER_OUT" || fail "(e) the python peer did not leave the hashes out"
[[ $(grep -c ': imported photo=' "$PEER_OUT") -eq 2 ]] || fail "(e) python peer did not report 2 imported items"
lf list --json >"$T/list.json"
for orig in sample.webp sample.gif; do
    id=$(json "[p['id'] for p in d if p.get('name')=='$orig'][0]" <"$T/list.json")
    want=$($PY -c "import hashlib,sys; print(hashlib.blake2b(open(sys.argv[1],'rb').read(), digest_size=32).hexdigest())" "$FIX/$orig")
    got=$(json "[p['contentHash'] for p in d if p['id']=='$id'][0]" <"$T/list.json")
    [[ $got == "$want" ]] || fail "(e) the vault's content hash of $orig is $got, expected $want"
    out=$(lf export "$id" "$T/export" --json | json 'd["path"]')
    cmp "$FIX/$orig" "$out" || fail "(e) exported $orig differs from the original"
    step "(e) $orig -> photo $id, content hash computed on arrival, exported copy identical"
done

END=$(date +%s.%N)
step "finished in $($PY -c "print(f'{$END-$START:.1f}')") s"
echo "interop: PASS"
