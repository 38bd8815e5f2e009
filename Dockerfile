# syntax=docker/dockerfile:1
# The triage-runner daemon's image. Build:   docker build -t triage-runner:dev .
# Run, deploy and verify: see deploy/README.md.
#
# Stages: build (dev dependencies, tsc) → kubectl (pinned, checksum-verified download) → runtime
# (production dependencies only, non-root uid 10001, read-only-root friendly).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src/ src/
COPY scripts/ scripts/
RUN npm run build

# ---------------------------------------------------------------------------------------------
# kubectl for the skills' triage script (bash + kubectl + jq). Pinned by version; verified against
# KUBECTL_SHA256 when given (recommended: pin it), else against the .sha256 file published beside the
# binary. The checksum used is printed so it can be pinned.
FROM ${NODE_IMAGE} AS kubectl
ARG KUBECTL_VERSION=v1.31.4
ARG KUBECTL_SHA256=
ARG TARGETARCH
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*
RUN set -eu; \
    arch="${TARGETARCH:-amd64}"; \
    base="https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${arch}"; \
    curl -fsSLo /tmp/kubectl "${base}/kubectl"; \
    sum="${KUBECTL_SHA256}"; \
    if [ -z "$sum" ]; then sum="$(curl -fsSL "${base}/kubectl.sha256")"; fi; \
    echo "kubectl ${KUBECTL_VERSION} linux/${arch} sha256 ${sum}"; \
    echo "${sum}  /tmp/kubectl" | sha256sum -c -; \
    install -m 0755 /tmp/kubectl /usr/local/bin/kubectl; \
    /usr/local/bin/kubectl version --client

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="triage-runner" \
      org.opencontainers.image.description="Daemon that has AI agents investigate incidents in hardened containers or Kubernetes Jobs" \
      org.opencontainers.image.licenses="Apache-2.0"

# git: the skills cache clones skill repositories; bash + jq + kubectl: the triage script.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git bash jq \
 && rm -rf /var/lib/apt/lists/*
COPY --from=kubectl /usr/local/bin/kubectl /usr/local/bin/kubectl

# A fixed non-root user; uid/gid 10001 match the Deployment's securityContext.
RUN groupadd --system --gid 10001 triage \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/triage-runner/home --shell /usr/sbin/nologin triage \
 && mkdir -p /var/lib/triage-runner/home /var/lib/triage-runner/skills /var/lib/triage-runner/workspaces \
 && chown -R 10001:10001 /var/lib/triage-runner

WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist/ dist/
COPY configs/ configs/
COPY runners/ runners/

# Everything the daemon writes lives under /var/lib/triage-runner (a volume) or /tmp: the image runs
# with a read-only root filesystem.
ENV HOME=/var/lib/triage-runner/home \
    SKILLS_CACHE_DIR=/var/lib/triage-runner/skills \
    TRIAGE_RUNNER_WORKSPACES_ROOT=/var/lib/triage-runner/workspaces \
    TRIAGE_RUNNER_HTTP_PORT=8742 \
    TMPDIR=/tmp
VOLUME ["/var/lib/triage-runner"]
USER 10001:10001
EXPOSE 8742

# No curl in the image: node itself asks /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.TRIAGE_RUNNER_HTTP_PORT||8742)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# node is PID 1 and handles SIGTERM itself (graceful drain). With plain `docker run`, add --init to
# reap orphaned grandchildren of the triage script. --max-semi-space-size=2 keeps an idle daemon's young
# generation small (about 10 MB less RSS; bench/startup.ts).
ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/dist/cli/main.js"]
CMD ["daemon", "--create-root"]
