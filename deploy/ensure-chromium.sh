#!/usr/bin/env bash
# Installs Debian's chromium, which the KDS browser test
# (edge/kds_browser_test.go) drives headless, when /usr/bin/chromium is
# missing. `make test` and .ci/run call it. Without root (or sudo) it only
# warns: the test then skips outside CI and fails in CI (CI=true).
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
run=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    run=(sudo -n)
  else
    echo "ensure-chromium: /usr/bin/chromium is missing and this user cannot apt-get install it;" \
      "the KDS browser test will skip (and fail under CI=true)" >&2
    exit 0
  fi
fi
echo "ensure-chromium: installing Debian's chromium for the KDS browser test" >&2
"${run[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${run[@]}" apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version >&2 || true
