#!/usr/bin/env bash
# Make a Docker-API container engine reachable for the tests.
#
# - If a Docker engine already answers (DOCKER_HOST, or /var/run/docker.sock), nothing is set up.
# - Otherwise Podman (Debian package) is configured and its Docker-compatible API service is started
#   in the background, detached from this script, on unix:///run/podman/podman.sock.
#
# Progress goes to stderr; stdout carries exactly one line, `export DOCKER_HOST=...`, so all of
#   bash .ci/setup-engine.sh            (prints it)
#   out=$(bash .ci/setup-engine.sh) && eval "$out"   (applies it; plain eval "$(...)" hides failure)
#   source .ci/setup-engine.sh          (applies it; shell options are left untouched)
# work. Safe to run any number of times.

__triage_setup_engine() (
  set -euo pipefail

  local sock=/run/podman/podman.sock
  local conf=/etc/containers/containers.conf
  local pidfile=/run/podman/triage-service.pid
  local log=/var/log/podman-service.log
  local deadline_s=${ENGINE_START_TIMEOUT:-60}

  say() { printf '[setup-engine] %s\n' "$*" >&2; }
  die() {
    say "ERROR: $*"
    exit 1
  }

  # ping URL-ish target: "unix:///path" or "tcp://host:port"
  ping_host() {
    local host=$1 out
    case "$host" in
      unix://*) out=$(curl -fsS --max-time 3 --unix-socket "${host#unix://}" http://d/_ping 2>/dev/null) ;;
      tcp://*) out=$(curl -fsS --max-time 3 "http://${host#tcp://}/_ping" 2>/dev/null) ;;
      *) return 1 ;;
    esac
    [[ "$out" == OK ]]
  }

  # set_conf SECTION KEY VALUE: set `KEY = VALUE` inside [SECTION] of $conf, replacing an existing
  # (uncommented) assignment, adding the key or the section if missing. Prints "changed" on change.
  set_conf() {
    local section=$1 key=$2 value=$3 tmp
    tmp=$(mktemp)
    awk -v sec="[$section]" -v key="$key" -v val="$value" '
      function emit() { print key " = " val; done = 1 }
      function depth(s,  o, c) { o = gsub(/\[/, "[", s); c = gsub(/\]/, "]", s); return o - c }
      skip > 0 { skip += depth($0); next }   # continuation lines of a replaced multi-line value
      {
        line = $0; sub(/^[ \t]+/, "", line); sub(/[ \t]+$/, "", line)
        if (line ~ /^\[/) {
          if (insec && !done) emit()
          insec = (line == sec); seen = seen || insec
          print; next
        }
        if (insec && line ~ ("^" key "[ \t]*=")) {
          if (!done) emit()
          v = line; sub(/^[^=]*=/, "", v); skip = depth(v)
          next
        }
        print
      }
      END {
        if (insec && !done) emit()
        if (!seen) { print ""; print sec; emit() }
      }' "$conf" >"$tmp"
    if cmp -s "$tmp" "$conf"; then
      rm -f "$tmp"
    else
      cat "$tmp" >"$conf" && rm -f "$tmp"
      say "set [$section] $key = $value in $conf"
      echo changed
    fi
  }

  # 1. An engine that already answers wins (a user's real Docker, or a service started earlier).
  if [[ -n "${DOCKER_HOST:-}" && "$DOCKER_HOST" != "unix://$sock" ]] && ping_host "$DOCKER_HOST"; then
    say "engine already reachable at DOCKER_HOST=$DOCKER_HOST; nothing to set up"
    echo "export DOCKER_HOST=$DOCKER_HOST"
    exit 0
  fi
  if [[ -z "${DOCKER_HOST:-}" ]] && ping_host unix:///var/run/docker.sock; then
    say "Docker engine reachable at /var/run/docker.sock; nothing to set up"
    echo "export DOCKER_HOST=unix:///var/run/docker.sock"
    exit 0
  fi
  if [[ -n "${DOCKER_HOST:-}" && "$DOCKER_HOST" != "unix://$sock" ]]; then
    say "DOCKER_HOST=$DOCKER_HOST does not answer; falling back to Podman"
  fi

  # 2. Podman, configured for this host.
  command -v podman >/dev/null ||
    die "podman is not installed (apt-get install -y podman runc busybox-static), and no Docker engine answers"
  command -v runc >/dev/null || die "runc is not installed (apt-get install -y runc)"
  command -v curl >/dev/null || die "curl is not installed"
  [[ $(id -u) == 0 ]] || die "must run as root to configure Podman's system service (or start a Docker engine)"

  mkdir -p /etc/containers /run/podman
  touch "$conf"
  local changed=""
  # crun fails on this kernel's hybrid cgroups; runc works.
  changed+=$(set_conf engine runtime '"runc"')
  changed+=$(set_conf containers default_ulimits '["nofile=1024:1024", "nproc=1024:1024"]')

  # 3. The API service. Restart it when the config changed under a service we started.
  local pid=""
  [[ -f "$pidfile" ]] && pid=$(cat "$pidfile")
  # Only trust the pidfile while that pid is still a podman API service: pids get reused, and a dead
  # service can linger as a zombie (PID 1 may not reap orphans), which `kill -0` still reports alive.
  is_service() { tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -q 'podman system service'; }
  if [[ -n "$pid" ]] && ! is_service "$pid"; then pid=""; fi
  if [[ -n "$changed" && -n "$pid" ]]; then
    say "containers.conf changed; restarting Podman service (pid $pid)"
    kill "$pid"
    for _ in $(seq 150); do is_service "$pid" || break; sleep 0.1; done
    is_service "$pid" && die "Podman service pid $pid did not stop"
    pid=""
  fi

  if ping_host "unix://$sock"; then
    say "Podman API service already answering at $sock"
    [[ -z "$changed" ]] ||
      say "WARNING: that service was not started by this script; restart it to apply containers.conf changes"
  else
    start_service() {
      rm -f "$sock"
      say "starting Podman API service (log: $log)"
      # From /: conmon drops files (e.g. "oom" after an OOM kill) into its working directory.
      (cd / && exec setsid nohup podman system service --time=0 "unix://$sock" >>"$log" 2>&1 </dev/null) &
      pid=$!
      started=1
      echo "$pid" >"$pidfile"
    }
    local started=""
    # A live pid from an earlier run may still be starting up (wait for it) or shutting down.
    [[ -n "$pid" ]] || start_service
    local end=$((SECONDS + deadline_s))
    until ping_host "unix://$sock"; do
      if ! is_service "$pid"; then
        [[ -z "$started" ]] && start_service && continue
        tail -n 20 "$log" >&2 || true
        die "Podman API service (pid $pid) exited; see $log"
      fi
      if ((SECONDS >= end)); then
        tail -n 20 "$log" >&2 || true
        die "Podman API at $sock did not answer /_ping within ${deadline_s}s; see $log"
      fi
      sleep 0.2
    done
    say "Podman API service answering at $sock (pid $pid)"
  fi
  echo "export DOCKER_HOST=unix://$sock"
)

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  # Sourced: apply the result without leaking `set -e` or exiting the caller's shell.
  if __triage_setup_engine_out=$(__triage_setup_engine); then
    eval "$__triage_setup_engine_out"
    unset __triage_setup_engine_out
  else
    unset __triage_setup_engine_out
    return 1
  fi
else
  __triage_setup_engine "$@"
fi
