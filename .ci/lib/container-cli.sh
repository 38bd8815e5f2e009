# Sourced by the .ci image builders. Prints the container CLI whose image store the tests' engine
# reads: CONTAINER_CLI if set; podman when DOCKER_HOST is Podman's socket; docker when a Docker engine
# answers; else podman. Fails with the next step when there is none.
pick_container_cli() {
  if [[ -n "${CONTAINER_CLI:-}" ]]; then
    echo "$CONTAINER_CLI"
  elif command -v podman >/dev/null && [[ "${DOCKER_HOST:-}" == *podman* ]]; then
    echo podman
  elif command -v docker >/dev/null && docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    echo docker
  elif command -v podman >/dev/null; then
    echo podman
  else
    echo "neither a reachable docker engine nor podman found (run: bash .ci/setup-engine.sh)" >&2
    return 1
  fi
}

# image_label CLI IMAGE LABEL: the label's value on a local image, or nothing when either is missing.
image_label() {
  "$1" image inspect --format "{{ index .Config.Labels \"$3\" }}" "$2" 2>/dev/null || true
}

# dir_digest DIR: a digest of every file under DIR (relative name, mode, content), for build-input hashes.
dir_digest() {
  (
    cd "$1"
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 stat -c '%n %a'
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  ) | sha256sum | cut -c1-64
}

# image_id CLI IMAGE: the local image's id, or nothing.
image_id() {
  "$1" image inspect --format '{{.Id}}' "$2" 2>/dev/null || true
}

# drop_replaced CLI OLD_ID NEW_TAG: removes the image a rebuild replaced, once nothing tags it, so
# repeated builds do not pile up gigabytes of untagged images. Images still in use are kept.
drop_replaced() {
  [[ -n "$2" && "$2" != "$(image_id "$1" "$3")" ]] || return 0
  "$1" rmi "$2" >/dev/null 2>&1 || true
}
