#!/bin/sh
# Entrypoint of the container image: maps environment variables to `locafoto agent` options.
#   LOCAFOTO_HOME (default /data)   LOCAFOTO_NAME   LOCAFOTO_PORT (default 47820)
#   LOCAFOTO_PASSPHRASE_FILE        unlock the vault at start (a mounted secret file)
# Extra arguments are passed to `locafoto agent`.
set -eu
set -- agent --port "${LOCAFOTO_PORT:-47820}" "$@"
if [ -n "${LOCAFOTO_NAME:-}" ]; then set -- "$@" --name "$LOCAFOTO_NAME"; fi
exec locafoto "$@"
