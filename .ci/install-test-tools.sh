#!/usr/bin/env bash
# Installs the real components the tests drive, from Debian, when missing: Alertmanager and Prometheus
# (webhook intake; tests start their own instances on loopback ports with temp configs, the packages'
# services are not needed) and Chromium (the status page test drives it through playwright-core, which
# downloads no browser of its own: the test uses /usr/bin/chromium or CHROMIUM_PATH).
# Works on a fresh machine and when re-run.
set -euo pipefail

missing=()
command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null || missing+=(prometheus-alertmanager)
command -v prometheus >/dev/null || missing+=(prometheus)
[[ -n "${CHROMIUM_PATH:-}" ]] || command -v chromium >/dev/null || missing+=(chromium)
if ((${#missing[@]} == 0)); then
  echo "alertmanager, prometheus and chromium present"
  exit 0
fi
echo "installing: ${missing[*]}"
command -v apt-get >/dev/null || { echo "apt-get not found; install manually: ${missing[*]}" >&2; exit 1; }
sudo=()
((EUID == 0)) || sudo=(sudo)
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
