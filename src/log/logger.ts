import { pino, type Logger, type DestinationStream } from 'pino';
import { Redactor } from './redact.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level?: string;
  /** Secret values are scrubbed from every line, whatever key they appear under. */
  redactor?: Redactor;
  /** Where JSON lines go; stderr by default so that command output on stdout stays clean. */
  destination?: DestinationStream;
}

/** JSON-lines logger whose every line passes through the redactor before it is written. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const redactor = options.redactor ?? new Redactor();
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'triage-runner' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Key-based redaction for well-known fields; value-based redaction in streamWrite below.
      redact: {
        paths: ['*.apiKey', '*.api_key', '*.token', '*.password', 'headers.authorization'],
        censor: '[REDACTED]',
      },
      hooks: { streamWrite: (line) => redactor.redact(line) },
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that drops everything (tests, --quiet). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
