import type { InvocationInput } from '../agents/types.js';
import type { Engine } from '../engines/types.js';

// A model endpoint on the daemon host's loopback that the agent cannot reach: on a container network
// 127.0.0.1 is the container itself, so the CLI retries "connection refused" for minutes and the run
// fails long after the cause was knowable. The preflight says so up front.

const KEYS: Record<keyof Omit<InvocationInput['providers'], 'gooseProvider'>, string> = {
  anthropicBaseUrl: 'providers.anthropic_base_url (or ANTHROPIC_BASE_URL)',
  openaiBaseUrl: 'providers.openai_base_url (or OPENAI_BASE_URL)',
  geminiBaseUrl: 'providers.gemini_base_url (or GOOGLE_GEMINI_BASE_URL)',
};

/** True for a host name that names the local machine's loopback interface. */
export function isLoopbackUrlHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127(?:\.\d{1,3}){3}$/.test(host) ||
    host === '::1' ||
    /^::ffff:127(?:\.\d{1,3}){3}$/.test(host)
  );
}

/**
 * Why the agent on `engine` cannot reach a configured provider endpoint, or undefined. Only loopback
 * addresses are judged: anything else may well be reachable and is left to the run.
 */
export function unreachableProviderProblem(
  providers: InvocationInput['providers'],
  engine: Pick<Engine, 'name' | 'placement' | 'capabilities'>,
): string | undefined {
  if (engine.capabilities.hostLoopback) return undefined;
  const problems: string[] = [];
  for (const [field, key] of Object.entries(KEYS)) {
    const value = providers[field as keyof typeof KEYS];
    if (!value) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      continue;
    }
    if (!isLoopbackUrlHost(url.hostname)) continue;
    problems.push(`${key} is ${url.origin}`);
  }
  if (problems.length === 0) return undefined;
  const fix =
    engine.capabilities.hostAddressHint ??
    "point it at an address the agent can reach (a Service or the host's address), or use engine: process";
  return `${problems.join('; ')}: a loopback address, which the agent running on the ${engine.name} engine cannot reach (there, loopback is the ${engine.placement} itself; its CLI would retry "connection refused" for minutes): ${fix}`;
}
