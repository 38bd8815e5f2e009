import type { AgentAdapter } from '../agents/types.js';
import type { Engine } from '../engines/types.js';
import { errorMessage } from '../util/errors.js';
import { resolveCommand } from '../util/process.js';
import { bridgeImageProblem, bridgeInImage } from './bridge-image.js';
import { brokerIdentityProbe } from './broker-identity.js';
import type { Readiness } from './types.js';
import type { PipelineEnv } from './env.js';
import { accessChecks } from './access.js';
import { providerSettings } from './invocation.js';
import { unreachableProviderProblem } from './reachability.js';

// Whether an incident can run now, for /readyz: the engine, the agent on it, its API key, the skills,
// and what the kubectl broker's identity may do on the cluster (broker-identity).

/**
 * Can an incident run now? The engine answers; the agent can start there (the image exists and can run
 * the gateway's bridge, or the CLI is on PATH); its API key is set. Skills that cannot be fetched leave the daemon ready but degraded:
 * runs go on without them.
 */
export async function readiness(env: PipelineEnv): Promise<Readiness> {
  const { config } = env;
  const checks: Readiness['checks'] = [];
  const check = async (name: string, probe: () => Promise<string | undefined>) => {
    try {
      const problem = await probe();
      checks.push({ name, ok: problem === undefined, ...(problem ? { detail: problem } : {}) });
    } catch (err) {
      checks.push({ name, ok: false, detail: errorMessage(err) });
    }
  };
  let engine: Engine | undefined;
  await check(`engine:${config.engine}`, async () => {
    const created = await env.engineFor(config.engine);
    engine = created;
    await created.ping();
    return undefined;
  });
  const made = engine;
  if (made) {
    await check('agent', () => agentProblem(env, made));
    // With the model gateway the agent calls the daemon, and the daemon the provider: a loopback
    // provider URL is then the daemon's to reach, not the container's.
    if (!(await gatewayCarries(env, made)))
      await check('model-endpoint', async () =>
        unreachableProviderProblem(providerSettings(config, env.env), made),
      );
  }
  await check('api-key', async () => keyProblem(env, await env.agents(config.agent.name)));
  await modelCheck(env, checks);
  try {
    const r = await env.skills.readiness();
    const missing = r.sources.filter((s) => !s.available);
    const details = [
      ...(r.cacheProblem ? [r.cacheProblem] : []),
      ...(missing.length
        ? [`runs go on without: ${missing.map((s) => `${s.name}: ${s.detail ?? 'unavailable'}`).join('; ')}`]
        : []),
    ];
    checks.push({
      name: 'skills',
      ok: true,
      ...(details.length ? { degraded: true, detail: details.join('; ') } : {}),
    });
  } catch (err) {
    checks.push({ name: 'skills', ok: true, degraded: true, detail: errorMessage(err) });
  }
  // One check per cluster: an unreachable one degrades the daemon, the others' incidents still run.
  checks.push(...(await accessChecks(env.clusterAccess, env.prometheusAccess)));
  // Only engines that give runs a kubectl broker have one whose identity matters.
  const identity = brokerIdentityProbe(config, env.env, env.clusters);
  if (identity && made?.capabilities.bundleSockets === true) checks.push(...(await identity()));
  return { ok: checks.every((c) => c.ok), degraded: checks.some((c) => c.degraded), checks };
}

/** Why the configured agent cannot start on `engine`, or undefined. */
async function agentProblem(env: PipelineEnv, engine: Engine): Promise<string | undefined> {
  const { config } = env;
  const image = config.agent.image;
  if (engine.placement === 'container') {
    if (engine.hasImage && !(await engine.hasImage(image)))
      return `agent image ${image} is not on the ${engine.name} engine: build it with \`docker build -t ${image} runners/\` (offline: \`bash .ci/build-agent-image.sh\`), or set agent.image`;
    // The gateway's bridge runs in the image in front of the CLI; without the gateway it needs nothing.
    if (bridgeInImage(engine) && (await gatewayCarries(env, engine)))
      return bridgeImageProblem(engine, image);
    return undefined;
  }
  const command = config.agent.command ?? config.agent.name;
  if (await resolveCommand(command, env.env.PATH)) return undefined;
  return `agent CLI ${command} is not on the daemon's PATH: install it (npm install -g ${(await env.agents(config.agent.name)).npmPackage ?? command}) or set agent.command to its path`;
}

/** The provider the configured agent CLI calls (its adapter says; Goose: by its provider setting). */
async function configuredProvider(env: PipelineEnv) {
  const { config } = env;
  const adapter = await env.agents(config.agent.name);
  return adapter.modelProvider({ gooseProvider: config.providers.goose_provider ?? env.env.GOOSE_PROVIDER });
}

/** The model gateway carries the configured agent's calls on this engine (src/run/model-gateway.ts). */
async function gatewayCarries(env: PipelineEnv, engine: Engine): Promise<boolean> {
  const { gateway } = env;
  const provider = await configuredProvider(env);
  if (!gateway || !provider || !gateway.serves(provider)) return false;
  if (engine.capabilities.networkBroker === true && env.podBroker) return true;
  return engine.placement === 'host' || engine.capabilities.bundleSockets === true;
}

/**
 * The provider answers through the gateway with the configured key (its models listing): a refused
 * key makes the daemon not ready; a provider that cannot be reached leaves it ready but degraded.
 */
async function modelCheck(env: PipelineEnv, checks: Readiness['checks']): Promise<void> {
  const { gateway } = env;
  const provider = await configuredProvider(env);
  if (!gateway || !provider || !gateway.serves(provider)) return;
  const problem = await gateway.preflight(provider);
  if (!problem)
    checks.push({ name: 'model-gateway', ok: true, detail: `${provider} answers through the gateway` });
  else if (/refused the configured key/.test(problem))
    checks.push({ name: 'model-gateway', ok: false, detail: problem });
  else checks.push({ name: 'model-gateway', ok: true, degraded: true, detail: problem });
}

/** Why the configured agent has no API key, or undefined. */
function keyProblem(env: PipelineEnv, adapter: AgentAdapter): string | undefined {
  const { config } = env;
  const keys =
    adapter.authSecrets?.({ gooseProvider: config.providers.goose_provider ?? env.env.GOOSE_PROVIDER }) ?? [];
  if (keys.length === 0 || keys.some((k) => env.secrets[k])) return undefined;
  return `agent ${adapter.id} needs ${keys.join(' or ')}, which is not set: set the variable (or the secret configured for it under secrets:) where the daemon runs`;
}
