#!/bin/sh
# Entrypoint of the container image: runs `locafoto agent`, configured by environment variables.
#   LOCAFOTO_HOME              node folder (identity, vault, inbox); the image sets /data (a VOLUME)
#   LOCAFOTO_NAME              display name shown to peers (default: the container's host name)
#   LOCAFOTO_PORT              TCP port for peers (default 47820)
#   LOCAFOTO_PEERS             comma-separated HOST:PORT peers, for bridge networking where mDNS
#                              does not pass (read by the agent itself)
#   LOCAFOTO_SKIP_INTERFACES   interface name prefixes whose mDNS results are ignored
#   LOCAFOTO_PASSPHRASE_FILE   unlock the vault at start (a mounted secret); otherwise it starts
#                              locked and `locafoto unlock` (docker exec) unlocks it
#   LOCAFOTO_CLASSIFY_HOOK     classify-before-import command (read by the agent itself)
# Extra arguments are passed to `locafoto agent`. The same script is exercised outside a
# container by Tests/Integration/test_entrypoint.py.
set -eu
port="${LOCAFOTO_PORT:-47820}"
case "$port" in
    ''|*[!0-9]*) echo "docker-entrypoint: LOCAFOTO_PORT must be a number, not '$port'" >&2; exit 64 ;;
esac
set -- agent --port "$port" "$@"
if [ -n "${LOCAFOTO_NAME:-}" ]; then set -- "$@" --name "$LOCAFOTO_NAME"; fi
if [ -n "${LOCAFOTO_SKIP_INTERFACES+set}" ]; then set -- "$@" --skip-interfaces "$LOCAFOTO_SKIP_INTERFACES"; fi
exec locafoto "$@"
