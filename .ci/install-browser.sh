#!/usr/bin/env bash
# Installs Debian's Chromium (the real browser the status page test drives through playwright-core)
# when missing. Works on a fresh machine and when re-run. playwright-core downloads no browser of its
# own: the test points it at /usr/bin/chromium (or CHROMIUM_PATH).
set -euo pipefail

if command -v chromium >/dev/null; then
  echo "chromium present: $(chromium --version 2>/dev/null | head -1)"
  exit 0
fi
echo "installing: chromium"
command -v apt-get >/dev/null || { echo "apt-get not found; install Chromium manually and set CHROMIUM_PATH" >&2; exit 1; }
sudo=()
((EUID == 0)) || sudo=(sudo)
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium
