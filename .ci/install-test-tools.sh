#!/usr/bin/env bash
# Installs the real components the tests drive, from Debian, when missing: Alertmanager and Prometheus
# (webhook intake; tests start their own instances on loopback ports with temp configs, the packages'
# services are not needed) and Chromium (the status page test drives it through playwright-core, which
# downloads no browser of its own: the test uses /usr/bin/chromium or CHROMIUM_PATH), and kubectl (the
# kubectl guard's differential test runs the real one against a stand-in API server: Debian's
# kubernetes-client package, or a `kubectl` package when the machine's apt sources have one).
# Works on a fresh machine and when re-run.
set -euo pipefail

missing=()
command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null || missing+=(prometheus-alertmanager)
command -v prometheus >/dev/null || missing+=(prometheus)
[[ -n "${CHROMIUM_PATH:-}" ]] || command -v chromium >/dev/null || missing+=(chromium)
need_kubectl=0
command -v kubectl >/dev/null || need_kubectl=1
if ((${#missing[@]} == 0 && need_kubectl == 0)); then
  echo "alertmanager, prometheus, chromium and kubectl present"
  exit 0
fi
echo "installing: ${missing[*]}"
command -v apt-get >/dev/null || { echo "apt-get not found; install manually: ${missing[*]}" >&2; exit 1; }
sudo=()
((EUID == 0)) || sudo=(sudo)
"${sudo[@]}" apt-get update -qq
if ((need_kubectl)); then
  # Prefer a `kubectl` package where the sources carry one (a current release); Debian's own is
  # kubernetes-client.
  if apt-cache policy kubectl 2>/dev/null | grep -q 'Candidate: [0-9]'; then missing+=(kubectl); else missing+=(kubernetes-client); fi
fi
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
