// Every log line names each key once (a child logger's bindings and a call's fields may overlap), and
// the pretty format is for people.
import { describe, expect, it } from 'vitest';
import { createLogger, finishLine, hasRepeatedKey, topLevelKeys } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';

describe('log lines', () => {
  it('finds the top-level keys of a line, ignoring nested objects and strings that look like keys', () => {
    expect(topLevelKeys('{"a":1,"b":{"a":2,"c":[{"a":3}]},"d":"x\\",\\"a\\":","e":[1,{"a":1}]}')).toEqual([
      'a',
      'b',
      'd',
      'e',
    ]);
    expect(hasRepeatedKey('{"runId":"r1","msg":"m","runId":"r1"}')).toBe(true);
    expect(hasRepeatedKey('{"runId":"r1","nested":{"runId":"r1"}}')).toBe(false);
  });

  it('writes each key once when a child binding and a call field overlap, the call winning', () => {
    const lines: string[] = [];
    const log = createLogger({ destination: { write: (l: string) => void lines.push(l) } })
      .child({ runId: 'r1', agent: 'claude' })
      .child({ agent: 'claude', engine: 'docker' });
    log.info({ runId: 'r1', id: 'c1' }, 'agent launched');
    for (const line of lines) expect(hasRepeatedKey(line), line).toBe(false);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ runId: 'r1', agent: 'claude', engine: 'docker', id: 'c1' });
  });

  it('still redacts secrets after rewriting a line', () => {
    const redactor = new Redactor({ ANTHROPIC_API_KEY: 'sk-ant-0123456789abcdef' });
    const out = finishLine('{"k":"sk-ant-0123456789abcdef","k":"sk-ant-0123456789abcdef"}\n', redactor);
    expect(out).not.toContain('sk-ant-0123456789abcdef');
    expect(hasRepeatedKey(out)).toBe(false);
  });
});
