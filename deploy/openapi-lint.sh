#!/usr/bin/env bash
# Lints the OpenAPI documents a hub and an edge serve (clienttest/openapi/,
# kept current by clienttest's snapshot test) with Redocly CLI, pinned in
# tools/openapi/package.json and installed there (git-ignored) on first use;
# later runs need no network. Fails on any error or warning.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=tools/openapi
if [ ! -x "$tools/node_modules/.bin/redocly" ]; then
  if ! command -v npm >/dev/null; then
    echo "openapi-lint: npm is missing (Debian: apt-get install nodejs npm)" >&2
    exit 1
  fi
  npm ci --prefix "$tools" --no-audit --no-fund --loglevel=error
fi
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
status=0
for doc in clienttest/openapi/hub.json clienttest/openapi/edge.json; do
  # --max-problems: list every finding; warnings fail like errors.
  out=$("$tools/node_modules/.bin/redocly" lint "$doc" --config "$tools/redocly.yaml" --max-problems 1000 2>&1) || status=1
  printf '%s\n' "$out" | grep -v '[║╔╚]' | sed '/^[[:space:]]*$/d'
  if printf '%s\n' "$out" | grep -Eq 'You have [0-9]+ warning'; then
    status=1
  fi
done
exit $status
