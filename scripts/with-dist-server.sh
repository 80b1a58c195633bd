#!/usr/bin/env bash
# Serve dist/ on a free loopback port (or $E2E_PORT), run the given command with BASE_URL set to it,
# stop the server, and exit with the command's status. Used by the e2e step and the page benchmark.
# Usage: bash scripts/with-dist-server.sh COMMAND [ARG ...]
set -uo pipefail
cd "$(dirname "$0")/.."
PORT="${E2E_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
LOG="${TMPDIR:-/tmp}/schedplay-http-$PORT.log"
python3 -m http.server "$PORT" --bind 127.0.0.1 --directory dist >"$LOG" 2>&1 &
HTTP_PID=$!
trap 'kill "$HTTP_PID" 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 0.2; done
# never test or measure someone else's server (e.g. the port got taken meanwhile)
if ! kill -0 "$HTTP_PID" 2>/dev/null; then
  echo "static server on port $PORT did not start: $(cat "$LOG")" >&2
  exit 1
fi
BASE_URL="http://127.0.0.1:$PORT/" "$@"
