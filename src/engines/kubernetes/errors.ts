import { TransientError, errorMessage } from '../../util/errors.js';

// How an API server's refusal or absence becomes an error the daemon acts on: unreachable, overloaded
// or failing is a TransientError (the run is retried), anything else a plain Error with a hint.

/** The HTTP status of a client-node error, if it has one. */
export function httpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown; statusCode?: unknown } | undefined)?.code;
  if (typeof code === 'number') return code;
  const status = (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** The API server's own message (its Status body), else the error's first line. */
export function apiMessage(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: string };
      if (parsed.message) return parsed.message;
    } catch {
      return body.slice(0, 500);
    }
  }
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return errorMessage(err).split('\n')[0] ?? '';
}

/** API server unreachable, overloaded or failing (5xx, 429, network) → TransientError; else a plain Error. */
export function classify(err: unknown, what: string, server: string): Error {
  const code = httpCode(err);
  if (code === undefined) {
    const sys = (err as { code?: unknown }).code;
    return new TransientError(
      `Kubernetes API server ${server} unreachable while trying to ${what}: ${errorMessage(err)}; ` +
        'the run will be retried — check the server address and that the API server is up',
      { cause: err, code: typeof sys === 'string' ? sys : undefined },
    );
  }
  if (code >= 500 || code === 429) {
    return new TransientError(
      `Kubernetes API server ${server} failed to ${what}: HTTP ${code} ${apiMessage(err)}; it will be retried`,
      { cause: err, code: `HTTP_${code}` },
    );
  }
  const hint =
    code === 401 || code === 403
      ? "check the daemon's ServiceAccount and Role (deploy/kubernetes/base/rbac.yaml)"
      : 'check the engine configuration under kubernetes:';
  return Object.assign(
    new Error(`Kubernetes API refused to ${what}: HTTP ${code} ${apiMessage(err)}; ${hint}`, { cause: err }),
    {
      statusCode: code,
    },
  );
}
