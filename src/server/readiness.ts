import type { Readiness } from '../shared/types.js';
import { errorMessage } from '../util/errors.js';

// The readiness checks as /readyz and /metrics ask for them: within a time limit, and a check that
// throws or does not answer in time is one failed check saying so, never an error of the request.

/** The readiness checks, or one failed `readiness` check when they throw or take longer than `ms`. */
export async function readinessWithin(read: () => Promise<Readiness>, ms: number): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const failed = (detail: string): Readiness => ({
    ok: false,
    checks: [{ name: 'readiness', ok: false, detail }],
  });
  const late = new Promise<Readiness>((resolve) => {
    timer = setTimeout(() => resolve(failed(`readiness check did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([read().catch((err: unknown) => failed(errorMessage(err))), late]);
  } finally {
    clearTimeout(timer);
  }
}
