#!/usr/bin/env bash
# Build the release page and serve it on http://127.0.0.1:${PORT:-8080}/ (Ctrl+C stops).
# Served by python's http.server rather than `trunk serve`: it serves exactly the dist/ that the e2e
# tests check (`trunk serve` rebuilds dist/ in debug mode unless told otherwise and injects an inline
# live-reload script, which the page's Content-Security-Policy blocks); http.server also sends .wasm
# as application/wasm.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS_ROOT="${TOOLS_ROOT:-$HOME/.cargo}"
export PATH="$TOOLS_ROOT/bin:$PWD/node_modules/.bin:$PATH"
PORT="${PORT:-8080}"
bash scripts/setup.sh
trunk build --release
echo "schedplay: http://127.0.0.1:$PORT/" >&2
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory dist
