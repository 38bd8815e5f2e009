#!/usr/bin/env bash
# Installs the real agent CLIs (Claude Code, Codex, Gemini CLI) from npm at pinned versions into a
# cache outside the repository, for the contract tests. Idempotent: does nothing when the pinned
# versions are already there. Prints the bin directory (the value for TRIAGE_RUNNER_CLI_BIN) last.
#
#   bash .ci/install-agent-clis.sh            # install or verify, print the bin dir
#   TRIAGE_RUNNER_CLI_CACHE=/some/dir bash .ci/install-agent-clis.sh
#
# Keep the versions in step with runners/Dockerfile (the agent image) and test/support/agent-clis.ts.
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.328
CODEX_VERSION=0.169.0
GEMINI_CLI_VERSION=0.61.0

cache=${TRIAGE_RUNNER_CLI_CACHE:-${HOME}/.cache/triage-runner/agent-clis}
packages=(
  "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"
  "@openai/codex@${CODEX_VERSION}"
  "@google/gemini-cli@${GEMINI_CLI_VERSION}"
)

# Prints the installed version of a package in the cache, or nothing.
installed_version() {
  local manifest="${cache}/node_modules/$1/package.json"
  [[ -f "$manifest" ]] || return 0
  node -e 'process.stdout.write(String(require(process.argv[1]).version ?? ""))' "$manifest"
}

all_present() {
  local spec name version
  for spec in "${packages[@]}"; do
    name=${spec%@*}
    version=${spec##*@}
    [[ "$(installed_version "$name")" == "$version" ]] || return 1
  done
  for bin in claude codex gemini; do
    [[ -x "${cache}/node_modules/.bin/${bin}" ]] || return 1
  done
}

if all_present; then
  echo "agent CLIs already installed in ${cache}" >&2
else
  echo "installing ${packages[*]} into ${cache}" >&2
  mkdir -p "$cache"
  [[ -f "${cache}/package.json" ]] || printf '{"name":"triage-runner-agent-clis","private":true}\n' >"${cache}/package.json"
  # --prefix keeps the install out of the repository; the exact versions make it reproducible.
  # Claude Code declares node>=22 but its npm package only selects a native binary, which runs on 20.
  npm install --prefix "$cache" --no-audit --no-fund --save-exact --loglevel=error --engine-strict=false \
    "${packages[@]}" >&2
  all_present || {
    echo "install-agent-clis: after npm install, ${cache} still lacks one of: ${packages[*]}" >&2
    exit 1
  }
fi

for bin in claude codex gemini; do
  printf '%s %s\n' "$bin" "$("${cache}/node_modules/.bin/${bin}" --version 2>/dev/null | head -n1)" >&2
done
echo "${cache}/node_modules/.bin"
