#!/usr/bin/env bash
# Build the integration-test image triage-runner-test-agent:latest FROM scratch with a static busybox
# and test/images/agent-test/ (no registry needed). Skips the build when an image labelled with the
# same context hash already exists.
#
#   BUSYBOX=/path/to/static/busybox  (default /bin/busybox, Debian package busybox-static)
#   CONTAINER_CLI=podman|docker      (default: podman when DOCKER_HOST is Podman's socket or no Docker
#                                     engine answers, else docker)
#   FORCE=1                          rebuild even when up to date
set -euo pipefail

IMAGE=triage-runner-test-agent:latest
LABEL=org.triage-runner.context-hash
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
context_src=$root/test/images/agent-test
busybox=${BUSYBOX:-/bin/busybox}

say() { printf '[build-test-image] %s\n' "$*" >&2; }
die() {
  say "ERROR: $*"
  exit 1
}

[[ -f "$context_src/Containerfile" ]] || die "missing $context_src/Containerfile"
[[ -x "$busybox" ]] || die "no busybox at $busybox: apt-get install -y busybox-static, or set BUSYBOX=/path/to/static/busybox"
if command -v ldd >/dev/null && ldd "$busybox" >/dev/null 2>&1; then
  die "$busybox is dynamically linked; a FROM scratch image needs a static one (Debian: busybox-static)"
fi

# shellcheck source=lib/container-cli.sh
source "$root/.ci/lib/container-cli.sh"
cli=$(pick_container_cli) || die "no container CLI"

# The hash covers every context file (name, mode, content) and the busybox binary.
hash=$({ dir_digest "$context_src" && sha256sum <"$busybox"; } | sha256sum | cut -c1-64)

current=$(image_label "$cli" "$IMAGE" "$LABEL")
if [[ "$current" == "$hash" && "${FORCE:-0}" != 1 ]]; then
  say "$IMAGE is up to date ($cli, context ${hash:0:12})"
  exit 0
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -a "$context_src/." "$stage/"
cp "$busybox" "$stage/busybox"
chmod 0755 "$stage/busybox"

say "building $IMAGE with $cli (context ${hash:0:12})"
"$cli" build --label "$LABEL=$hash" -t "$IMAGE" -f "$stage/Containerfile" "$stage" >&2 ||
  die "$cli build failed"
say "built $IMAGE"
