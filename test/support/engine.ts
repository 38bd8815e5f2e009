// Access to the real container engine (Docker, or Podman's Docker-compatible API) for integration tests.
//
// Pattern: `const docker = await requireEngine();` at the top of a test file, then
// `describe.skipIf(!docker)(...)`. Outside CI a missing engine skips those tests; with CI set it is an
// error, so CI never silently skips engine tests.
import { existsSync } from 'node:fs';
import Docker from 'dockerode';
import { dockerClient as buildClient } from '../../src/engines/docker/index.js';

/** Built by `bash .ci/build-test-image.sh` from test/images/agent-test/. */
export const TEST_IMAGE = 'triage-runner-test-agent:latest';

export const PODMAN_SOCKET = '/run/podman/podman.sock';
const DOCKER_SOCKET = '/var/run/docker.sock';
const PING_TIMEOUT_MS = 5000;

/**
 * The engine address to use: DOCKER_HOST if set, else Docker's default socket if it exists, else the
 * socket that .ci/setup-engine.sh starts Podman on if that exists, else Docker's default.
 */
export function dockerHost(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DOCKER_HOST) return env.DOCKER_HOST;
  if (existsSync(DOCKER_SOCKET)) return `unix://${DOCKER_SOCKET}`;
  if (existsSync(PODMAN_SOCKET)) return `unix://${PODMAN_SOCKET}`;
  return `unix://${DOCKER_SOCKET}`;
}

/** A dockerode client for the test engine, built by the engine module itself (one place knows the address forms). */
export function dockerClient(env: NodeJS.ProcessEnv = process.env): Docker {
  return buildClient(dockerHost(env), env, Docker);
}

/** CI set to anything but empty, 0 or false: missing real components fail tests instead of skipping them. */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

async function ping(docker: Docker, timeoutMs: number): Promise<void> {
  // dockerode forwards `abortSignal` to the request; its typings just do not declare the option.
  const pingWithOpts = docker.ping.bind(docker) as unknown as (opts: {
    abortSignal: AbortSignal;
  }) => Promise<unknown>;
  await pingWithOpts({ abortSignal: AbortSignal.timeout(timeoutMs) });
}

let cached: Promise<Docker | undefined> | undefined;

/**
 * A client for the engine if it answers `ping` within 5 s. If it does not: throws when CI is set
 * (engine tests must run there), otherwise warns and returns undefined so callers can skip.
 */
export function requireEngine(): Promise<Docker | undefined> {
  cached ??= (async () => {
    const host = dockerHost();
    try {
      const docker = dockerClient();
      await ping(docker, PING_TIMEOUT_MS);
      return docker;
    } catch (err) {
      const reason =
        err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')
          ? `no answer to ping within ${PING_TIMEOUT_MS} ms`
          : err instanceof Error
            ? err.message
            : String(err);
      const message =
        `container engine unreachable at ${host} (${reason}). Start one with ` +
        `\`bash .ci/setup-engine.sh\` (Podman; then DOCKER_HOST=unix://${PODMAN_SOCKET}) or start Docker.`;
      if (isCi(process.env)) throw new Error(`${message} CI is set, so engine tests may not be skipped.`);
      console.warn(`skipping container-engine tests: ${message}`);
      return undefined;
    }
  })();
  return cached;
}

/** Throws with the build command when TEST_IMAGE is missing (an engine without the image is a setup error). */
export async function requireTestImage(docker: Docker): Promise<void> {
  try {
    await docker.getImage(TEST_IMAGE).inspect();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(
      `test image ${TEST_IMAGE} not found (${reason}); build it with \`bash .ci/build-test-image.sh\``,
    );
  }
}

/** The agent image, built by `bash .ci/build-agent-image.sh` from runners/Dockerfile. */
export const AGENT_IMAGE = 'triage-agent:latest';

/**
 * Whether the engine has the agent image. When it does not: throws with the build command when CI is
 * set (CI builds it, so its absence is a setup error), otherwise warns and returns false so callers skip.
 */
export async function requireAgentImage(
  docker: Docker,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  try {
    await docker.getImage(AGENT_IMAGE).inspect();
    return true;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const message = `agent image ${AGENT_IMAGE} not found (${reason}); build it with \`bash .ci/build-agent-image.sh\``;
    if (isCi(env)) throw new Error(`${message}. CI is set, so the agent-image tests may not be skipped.`);
    console.warn(`skipping agent-image tests: ${message}`);
    return false;
  }
}
