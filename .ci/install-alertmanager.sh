#!/usr/bin/env bash
# Installs Debian's Alertmanager and Prometheus (the real components the webhook intake tests run)
# when missing. Works on a fresh machine and when re-run. The packages' services are not needed:
# tests start their own instances on loopback ports with temp configs.
set -euo pipefail

missing=()
command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null || missing+=(prometheus-alertmanager)
command -v prometheus >/dev/null || missing+=(prometheus)
if ((${#missing[@]} == 0)); then
  echo "alertmanager and prometheus present"
  exit 0
fi
echo "installing: ${missing[*]}"
command -v apt-get >/dev/null || { echo "apt-get not found; install manually: ${missing[*]}" >&2; exit 1; }
sudo=()
((EUID == 0)) || sudo=(sudo)
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
