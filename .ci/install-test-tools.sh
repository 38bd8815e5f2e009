#!/usr/bin/env bash
# Installs the real components the tests drive, from Debian, when missing: Alertmanager and Prometheus
# (webhook intake; tests start their own instances on loopback ports with temp configs, the packages'
# services are not needed) and Chromium (the status page test drives it through playwright-core, which
# downloads no browser of its own: the test uses /usr/bin/chromium or CHROMIUM_PATH), and kubectl (the
# kubectl guard's differential test runs the real one against a stand-in API server, and the deploy
# tests render deploy/kubernetes with its `kubectl kustomize`: a `kubectl` package when the machine's
# apt sources have one, else Debian's kubernetes-client). The deploy manifests need the kustomize of
# kubectl 1.27 or later (v5); the script checks that at the end and says so if it is older.
# Works on a fresh machine and when re-run.
set -euo pipefail

missing=()
command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null || missing+=(prometheus-alertmanager)
command -v prometheus >/dev/null || missing+=(prometheus)
[[ -n "${CHROMIUM_PATH:-}" ]] || command -v chromium >/dev/null || missing+=(chromium)
command -v jq >/dev/null || missing+=(jq) # reads kubectl's version below
need_kubectl=0
command -v kubectl >/dev/null || need_kubectl=1
# The kustomize bundled in kubectl must be v5 or later: components, replicas and the patches the
# manifests use. Debian bookworm's kubernetes-client is 1.20 (kustomize v2): too old, and no newer
# kubectl comes from Debian's own archive.
check_kustomize() {
  local kubectl=${TRIAGE_TEST_KUBECTL:-kubectl} version
  version=$("$kubectl" version --client -o json 2>/dev/null | jq -r '.kustomizeVersion // "none"')
  if [[ ! $version =~ ^v([0-9]+)\. ]] || ((BASH_REMATCH[1] < 5)); then
    echo "$(command -v "$kubectl") bundles kustomize $version; deploy/kubernetes needs v5 or later (kubectl 1.27+)." >&2
    echo "Install a current kubectl (the kubectl package from the Kubernetes or Google Cloud apt repository) or set TRIAGE_TEST_KUBECTL to one." >&2
    return 1
  fi
  echo "kubectl kustomize: $version"
}

if ((${#missing[@]} == 0 && need_kubectl == 0)); then
  echo "alertmanager, prometheus, chromium and kubectl present"
  check_kustomize
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
check_kustomize
