#!/usr/bin/env bash
# Build the agent image triage-agent:latest from runners/Dockerfile without a container registry,
# GitHub or dl.k8s.io (only Debian's apt mirror and the npm registry):
#   1. the base: a stand-in for node:20-bookworm-slim built from Debian packages with mmdebstrap (Debian
#      bookworm, the user `node` with uid/gid 1000) plus this machine's node and npm, imported into the
#      container engine as localhost/triage-agent-base:local;
#   2. runners/Dockerfile on that base (--build-arg BASE_IMAGE=…), with kubectl from Debian's
#      kubernetes-client package and no Goose; the build reaches the registries through the host's
#      network and trusts the host's CA bundle (passed as the build secret `ca_bundle`).
# Each step is skipped when an image labelled with the same input hash exists, so a second run with
# unchanged inputs does nothing. Needs root for mmdebstrap (installed from apt when missing).
#
#   IMAGE=triage-agent:latest                 the tag to build
#   CONTAINER_CLI=podman|docker               default: see .ci/lib/container-cli.sh
#   DEBIAN_SUITE=bookworm                     must match the host's node build (same glibc or newer)
#   DEBIAN_MIRROR=http://deb.debian.org/debian
#   DEBIAN_SECURITY_MIRROR=http://deb.debian.org/debian-security
#   CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt   the CAs the build trusts (default: that file if present; "" for none)
#   FORCE=1                                   rebuild both steps even when up to date
set -euo pipefail

IMAGE=${IMAGE:-triage-agent:latest}
BASE=localhost/triage-agent-base:local
LABEL=org.triage-runner.context-hash
suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# The host's bundle by default, when it has one at Debian's path.
default_ca=/etc/ssl/certs/ca-certificates.crt
[[ -s "$default_ca" ]] || default_ca=""
ca_bundle=${CA_BUNDLE-$default_ca}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
context=$root/runners
# What runners/Dockerfile gets here; the defaults download kubectl from dl.k8s.io.
build_args=(--build-arg KUBECTL_SOURCE=debian)

say() { printf '[build-agent-image] %s\n' "$*" >&2; }
die() {
  say "ERROR: $*"
  exit 1
}
started=$SECONDS

# shellcheck source=lib/container-cli.sh
source "$root/.ci/lib/container-cli.sh"
cli=$(pick_container_cli) || die "no container CLI"
[[ -f "$context/Dockerfile" ]] || die "missing $context/Dockerfile"
[[ -z "$ca_bundle" || -s "$ca_bundle" ]] || die "CA_BUNDLE=$ca_bundle is missing or empty; set CA_BUNDLE to a PEM bundle, or CA_BUNDLE= for none"

node_bin=$(command -v node) || die "node is not on PATH; this build copies the machine's Node.js 20 into the base"
node_bin=$(readlink -f "$node_bin")
node_version=$("$node_bin" --version)
[[ "$node_version" == v20.* ]] || die "node is $node_version at $node_bin; the base stands in for node:20, install Node.js 20"
npm_cli=$(readlink -f "$(command -v npm)") || die "npm is not on PATH"
npm_dir=$(dirname "$(dirname "$npm_cli")")
[[ -f "$npm_dir/package.json" ]] || die "cannot find npm's package folder from $npm_cli (expected <npm>/bin/npm-cli.js)"

# Inputs of each step: the base's (this script, suite, mirrors, node, npm), then the image's (the base,
# every file of runners/, the build arguments).
base_hash=$(
  {
    sha256sum <"${BASH_SOURCE[0]}"
    echo "$suite $mirror $security_mirror"
    sha256sum <"$node_bin"
    dir_digest "$npm_dir"
  } | sha256sum | cut -c1-64
)
image_hash=$({ echo "$base_hash ${build_args[*]}" && dir_digest "$context"; } | sha256sum | cut -c1-64)

if [[ "$(image_label "$cli" "$IMAGE" "$LABEL")" == "$image_hash" && "${FORCE:-0}" != 1 ]]; then
  say "$IMAGE is up to date ($cli, inputs ${image_hash:0:12})"
  exit 0
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
old_image=$(image_id "$cli" "$IMAGE")
old_base=$(image_id "$cli" "$BASE")

if [[ "$(image_label "$cli" "$BASE" "$LABEL")" == "$base_hash" && "${FORCE:-0}" != 1 ]]; then
  say "$BASE is up to date (inputs ${base_hash:0:12})"
else
  if ! command -v mmdebstrap >/dev/null; then
    command -v apt-get >/dev/null || die "mmdebstrap is missing and apt-get is not available; install mmdebstrap"
    sudo=()
    ((EUID == 0)) || sudo=(sudo)
    say "installing mmdebstrap"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq mmdebstrap >&2
  fi
  ((EUID == 0)) || die "mmdebstrap must run as root here (it builds a root file system owned by root)"
  say "building $BASE: Debian $suite from $mirror + node $node_version (inputs ${base_hash:0:12})"
  # Like Debian's slim images: no manuals, documentation or translations. The hooks add node and npm
  # where the official node image has them, then the user `node`, then prove node runs on this glibc.
  mmdebstrap --variant=minbase --include=ca-certificates,libstdc++6 \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='mkdir -p "$1/usr/local/bin" "$1/usr/local/lib/node_modules"' \
    --customize-hook="copy-in $node_bin /usr/local/bin" \
    --customize-hook="copy-in $npm_dir /usr/local/lib/node_modules" \
    --customize-hook='ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"' \
    --customize-hook='ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
    --customize-hook='chroot "$1" groupadd --gid 1000 node' \
    --customize-hook='chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
    --customize-hook='chroot "$1" /usr/local/bin/node --version' \
    "$suite" "$stage/base.tar" \
    "deb $mirror $suite main" \
    "deb $mirror $suite-updates main" \
    "deb $security_mirror $suite-security main" >&2 ||
    die "mmdebstrap failed (see above); check that $mirror answers and that node runs on Debian $suite"
  "$cli" import \
    --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change "ENV NODE_VERSION=${node_version#v}" \
    --change "LABEL $LABEL=$base_hash" \
    --change 'CMD ["node"]' \
    "$stage/base.tar" "$BASE" >/dev/null || die "$cli import of the base failed"
  rm -f "$stage/base.tar"
  say "imported $BASE"
fi

secret=()
[[ -n "$ca_bundle" ]] && secret=(--secret "id=ca_bundle,src=$ca_bundle")
say "building $IMAGE with $cli on $BASE (inputs ${image_hash:0:12})"
"$cli" build --network host "${secret[@]}" --build-arg "BASE_IMAGE=$BASE" "${build_args[@]}" \
  --label "$LABEL=$image_hash" -t "$IMAGE" "$context" >&2 || die "$cli build of $context failed (see above)"
drop_replaced "$cli" "$old_image" "$IMAGE"
drop_replaced "$cli" "$old_base" "$BASE"
say "built $IMAGE in $((SECONDS - started)) s"
