#!/usr/bin/env bash
# Builds and smoke-tests the daemon's Dockerfile on a machine that cannot pull from a container
# registry (like the project's build machines), using Podman:
#   1. a stand-in for node:20-bookworm-slim: a Debian bookworm minbase root file system (debootstrap,
#      from Debian's package mirror) plus this machine's own node and npm (must be Node 20);
#   2. the Dockerfile with its kubectl stage replaced by a stub (dl.k8s.io is not reachable);
#   3. the image run as in production: read-only root, /tmp as tmpfs, a volume for /var/lib/triage-runner;
#      checks uid 10001, no dev dependencies, validate-config, the daemon's /healthz via the image's own
#      HEALTHCHECK, /readyz, and a graceful stop.
# Run as root from the repository root: bash deploy/local-image-check.sh  (takes ~5 minutes the first time).
# Where a registry is reachable, build the real thing instead: docker build -t triage-runner:dev .
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

work=${LOCAL_IMAGE_CHECK_DIR:-/tmp/triage-runner-image-check}
base=localhost/triage-runner-base:20-bookworm-local
image=localhost/triage-runner:local-check
name=triage-runner-local-check
volume=triage-runner-local-check
mkdir -p "$work"

command -v podman >/dev/null || { echo "podman is required (apt-get install podman)" >&2; exit 2; }
[[ "$(node --version)" == v20.* ]] || { echo "this machine's node must be v20 (found $(node --version))" >&2; exit 2; }

if ! podman image exists "$base"; then
  command -v debootstrap >/dev/null || apt-get install -y debootstrap
  rootfs="$work/rootfs"
  [[ -x "$rootfs/bin/sh" ]] || debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian
  install -D -m 0755 "$(command -v node)" "$rootfs/usr/local/bin/node"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  mkdir -p "$rootfs/usr/local/lib/node_modules" && rm -rf "$rootfs/usr/local/lib/node_modules/npm"
  cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # This machine's extra CAs (a TLS-inspecting proxy in front of the registries), kept across
  # update-ca-certificates in the image.
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$rootfs/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
  fi
  if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
    mkdir -p "$rootfs/etc/ssl/certs" && cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
  fi
  rm -rf "$rootfs/var/cache/apt/archives/"*.deb
  tar -C "$rootfs" -c . | podman import \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$base"
fi

# The Dockerfile, with only the kubectl stage swapped for a stub.
python3 - "$work/Dockerfile" <<'EOF'
import sys
s = open('Dockerfile').read()
a = s.index('FROM ${NODE_IMAGE} AS kubectl')
b = s.index('# ----', a)
stub = ('FROM ${NODE_IMAGE} AS kubectl\n'
        "RUN printf '#!/bin/sh\\necho kubectl-stub\\n' > /usr/local/bin/kubectl && chmod 0755 /usr/local/bin/kubectl\n\n")
open(sys.argv[1], 'w').write(s[:a] + stub + s[b:])
EOF
podman build --format docker -f "$work/Dockerfile" --build-arg NODE_IMAGE="$base" -t "$image" .

fail() { echo "FAILED: $*" >&2; podman logs "$name" 2>&1 | tail -20 >&2 || true; exit 1; }
cleanup() { podman rm -f "$name" >/dev/null 2>&1 || true; podman volume rm -f "$volume" >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup
run=(podman run --rm --read-only --tmpfs /tmp -v "$volume:/var/lib/triage-runner")

[[ "$("${run[@]}" --entrypoint id "$image" -u)" == 10001 ]] || fail "the image does not run as uid 10001"
"${run[@]}" --entrypoint sh "$image" -c '! ls /app/node_modules | grep -qE "^(vitest|typescript|eslint|kubernetes-models)$"' ||
  fail "dev dependencies in the runtime image"
"${run[@]}" --entrypoint sh "$image" -c '! touch /app/probe 2>/dev/null' || fail "the root file system is writable"
"${run[@]}" "$image" validate-config /app/configs/config.example.yaml || fail "validate-config"

podman run -d --name "$name" --read-only --tmpfs /tmp -v "$volume:/var/lib/triage-runner" \
  -e TRIAGE_RUNNER_ENGINE=process -e SKILLS_DISABLE_TRIAGE_PRELOAD=true -e 'TRIAGE_RUNNER_SKILLS_SOURCES=[]' "$image" >/dev/null
healthy=""
for _ in $(seq 60); do
  if podman healthcheck run "$name" >/dev/null 2>&1; then healthy=1; break; fi
  sleep 1
done
[[ -n "$healthy" ]] || fail "HEALTHCHECK (/healthz) never passed within 60 s"
podman exec "$name" node -e "fetch('http://127.0.0.1:8742/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" ||
  fail "/readyz did not answer 200"
podman stop -t 30 "$name" >/dev/null
podman logs "$name" 2>&1 | grep -q '"daemon stopped"' || fail "the daemon did not stop gracefully on SIGTERM"
echo "local image check passed: $image (exit code after SIGTERM: $(podman inspect "$name" --format '{{.State.ExitCode}}'))"
