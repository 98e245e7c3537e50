#!/bin/sh
# Entrypoint of the container image: runs `locafoto agent`, or with LOCAFOTO_ROLE=relay a headless
# store-and-forward relay (`locafoto relay run`: no vault, no passphrase), configured by
# environment variables.
#   LOCAFOTO_ROLE              agent (the default) or relay
#   LOCAFOTO_HOME              node folder (identity, vault, inbox; a relay's store); the image
#                              sets /data (a VOLUME)
#   LOCAFOTO_NAME              display name shown to peers (default: the container's host name)
#   LOCAFOTO_PORT              TCP port for peers (default 47820)
#   LOCAFOTO_PEERS             comma-separated HOST:PORT peers, for bridge networking where mDNS
#                              does not pass; for a relay, the recipients it can deliver to
#                              (read by locafoto itself)
# Agent only:
#   LOCAFOTO_SKIP_INTERFACES   interface name prefixes whose mDNS results are ignored
#   LOCAFOTO_PASSPHRASE_FILE   unlock the vault at start (a mounted secret); otherwise it starts
#                              locked and `locafoto unlock` (docker exec) unlocks it
#   LOCAFOTO_CLASSIFY_HOOK     classify-before-import command (read by the agent itself)
#   LOCAFOTO_RELAYS            comma-separated HOST:PORT relays the agent collects offers and
#                              receipts from, and deposits at for trusted peers that are offline
#                              (read by the agent itself)
# Relay only (a relay refuses to start unless LOCAFOTO_RELAY_ALLOW or LOCAFOTO_RELAY_OPEN says
# who may deposit):
#   LOCAFOTO_RELAY_ALLOW       comma-separated fingerprints of the senders allowed to deposit
#                              (`locafoto id` on their machines; read by the relay itself)
#   LOCAFOTO_RELAY_OPEN        1: anyone may deposit, quotas still apply (read by the relay itself)
#   LOCAFOTO_RELAY_MAX_SENDER_BYTES, LOCAFOTO_RELAY_MAX_TOTAL_BYTES
#                              bytes held per sender / in all, with an optional K, M or G suffix
#                              (1024-based): 2G
#   LOCAFOTO_RELAY_MAX_SENDER_ITEMS, LOCAFOTO_RELAY_MAX_TOTAL_ITEMS
#                              photos held per sender / in all
#   LOCAFOTO_RELAY_EXPIRY      seconds an undelivered deposit is kept before it is dropped
#                              (unset quotas and expiry: the relay's defaults, see
#                              `locafoto relay run --help`)
# Extra arguments are passed to `locafoto agent` or `locafoto relay run`. `docker-entrypoint.sh
# healthcheck` (the image's HEALTHCHECK) asks the running agent or relay through its control
# socket: `locafoto status` or `locafoto relay status`. The same script is exercised outside a
# container by Tests/Integration/test_entrypoint.py.
set -eu

die() { echo "docker-entrypoint: $*" >&2; exit 64; }

# number NAME VALUE: VALUE must be decimal digits.
number() {
    case "$2" in
        ''|*[!0-9]*) die "$1 must be a number, not '$2'" ;;
    esac
}

# size NAME VALUE: decimal digits with an optional K, M or G suffix.
size() {
    case "$2" in
        ''|*[!0-9KMGkmg]*|[KMGkmg]*|*[KMGkmg]?*)
            die "$1 must be a number of bytes with an optional K, M or G suffix (1024-based), not '$2'" ;;
    esac
}

role="${LOCAFOTO_ROLE:-agent}"
case "$role" in
    agent|relay) ;;
    *) die "LOCAFOTO_ROLE must be agent or relay, not '$role'" ;;
esac

if [ "${1:-}" = healthcheck ]; then
    if [ "$role" = relay ]; then exec locafoto relay status; else exec locafoto status; fi
fi

port="${LOCAFOTO_PORT:-47820}"
number LOCAFOTO_PORT "$port"

if [ "$role" = agent ]; then
    set -- agent --port "$port" "$@"
    if [ -n "${LOCAFOTO_NAME:-}" ]; then set -- "$@" --name "$LOCAFOTO_NAME"; fi
    if [ -n "${LOCAFOTO_SKIP_INTERFACES+set}" ]; then set -- "$@" --skip-interfaces "$LOCAFOTO_SKIP_INTERFACES"; fi
    exec locafoto "$@"
fi

set -- relay run --port "$port" "$@"
if [ -n "${LOCAFOTO_NAME:-}" ]; then set -- "$@" --name "$LOCAFOTO_NAME"; fi
if [ -n "${LOCAFOTO_RELAY_MAX_SENDER_BYTES:-}" ]; then
    size LOCAFOTO_RELAY_MAX_SENDER_BYTES "$LOCAFOTO_RELAY_MAX_SENDER_BYTES"
    set -- "$@" --max-sender-bytes "$LOCAFOTO_RELAY_MAX_SENDER_BYTES"
fi
if [ -n "${LOCAFOTO_RELAY_MAX_TOTAL_BYTES:-}" ]; then
    size LOCAFOTO_RELAY_MAX_TOTAL_BYTES "$LOCAFOTO_RELAY_MAX_TOTAL_BYTES"
    set -- "$@" --max-total-bytes "$LOCAFOTO_RELAY_MAX_TOTAL_BYTES"
fi
if [ -n "${LOCAFOTO_RELAY_MAX_SENDER_ITEMS:-}" ]; then
    number LOCAFOTO_RELAY_MAX_SENDER_ITEMS "$LOCAFOTO_RELAY_MAX_SENDER_ITEMS"
    set -- "$@" --max-sender-items "$LOCAFOTO_RELAY_MAX_SENDER_ITEMS"
fi
if [ -n "${LOCAFOTO_RELAY_MAX_TOTAL_ITEMS:-}" ]; then
    number LOCAFOTO_RELAY_MAX_TOTAL_ITEMS "$LOCAFOTO_RELAY_MAX_TOTAL_ITEMS"
    set -- "$@" --max-total-items "$LOCAFOTO_RELAY_MAX_TOTAL_ITEMS"
fi
if [ -n "${LOCAFOTO_RELAY_EXPIRY:-}" ]; then
    number LOCAFOTO_RELAY_EXPIRY "$LOCAFOTO_RELAY_EXPIRY"
    set -- "$@" --expiry "$LOCAFOTO_RELAY_EXPIRY"
fi
exec locafoto "$@"
