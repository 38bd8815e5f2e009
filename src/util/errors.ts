// Errors that carry what callers branch on as fields, never as message text.

/** A failure worth retrying later (engine unreachable, disk full, API server down). */
export class TransientError extends Error {
  readonly transient = true;
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options);
    this.name = 'TransientError';
    this.code = options?.code;
  }
  readonly code: string | undefined;
}

/**
 * What the user asked for or configured cannot work (a flag, a config key, a key file): said as is, and
 * the command line ends with exit code 2. Thrown below the CLI, which recognises it by type.
 */
export class UsageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UsageError';
  }
}

export const isTransient = (err: unknown): boolean =>
  (err instanceof Error && (err as { transient?: boolean }).transient === true) ||
  ['ENOSPC', 'EAGAIN', 'EMFILE', 'ENFILE', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(
    (err as NodeJS.ErrnoException | undefined)?.code ?? '',
  );

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
