import { createRequire } from 'node:module';
import { pino, type Logger, type DestinationStream } from 'pino';
import { Redactor } from './redact.js';

export type { Logger } from 'pino';

export type LogFormat = 'auto' | 'json' | 'pretty';

export interface LoggerOptions {
  level?: string;
  /** json: one JSON object per line; pretty: for people at a terminal; auto: pretty when stderr is a TTY. */
  format?: LogFormat;
  /** Secret values are scrubbed from every line, whatever key they appear under. */
  redactor?: Redactor;
  /** Where lines go; stderr by default so that command output on stdout stays clean. */
  destination?: DestinationStream;
}

/**
 * One line as written: secrets redacted, and every key once. A child logger's bindings and a call's
 * fields may name the same key (a run id); JSON.parse keeps the last value, so the line is rewritten
 * through it when the cheap check sees a repeated key.
 */
export function finishLine(line: string, redactor: Redactor): string {
  const clean = redactor.redact(line);
  if (!hasRepeatedKey(clean)) return clean;
  try {
    return `${JSON.stringify(JSON.parse(clean))}\n`;
  } catch {
    return clean;
  }
}

/** True when a top-level key of the JSON object `line` occurs twice. */
export function hasRepeatedKey(line: string): boolean {
  return topLevelKeys(line).length !== new Set(topLevelKeys(line)).size;
}

/** The top-level keys of a JSON object text, in order (strings and nesting are skipped). */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) keys.push(text.slice(i + 1, j));
      expectKey = false;
      i = j;
    } else if (c === '{' || c === '[') {
      depth++;
      expectKey = depth === 1 && c === '{';
    } else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 1) expectKey = true;
  }
  return keys;
}

const require = createRequire(import.meta.url);

/** A destination for people: pino-pretty, loaded only when asked for. */
function prettyDestination(): DestinationStream {
  const pretty = require('pino-pretty') as (o: object) => DestinationStream;
  return pretty({
    destination: 2,
    sync: true,
    colorize: process.stderr.isTTY,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
  });
}

/** The logger of every command: JSON lines (or pretty at a terminal), each line through the redactor. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const redactor = options.redactor ?? new Redactor();
  const format = options.format ?? 'json';
  const pretty = format === 'pretty' || (format === 'auto' && process.stderr.isTTY === true);
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
      hooks: { streamWrite: (line) => finishLine(line, redactor) },
    },
    options.destination ?? (pretty ? prettyDestination() : pino.destination({ fd: 2, sync: true })),
  );
}

/** A logger that drops everything (tests, --quiet). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
