import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOTIFY_SINK_TYPES } from '../../../src/config/schema.js';
import { SINKS } from '../../../src/notify/sinks/index.js';

const SINKS_DIR = join(import.meta.dirname, '..', '..', '..', 'src', 'notify', 'sinks');

describe('sink registry', () => {
  it('has exactly one adapter per module in src/notify/sinks and per configurable sink type', () => {
    const modules = readdirSync(SINKS_DIR)
      .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(SINKS).sort()).toEqual(modules);
    expect(Object.keys(SINKS).sort()).toEqual([...NOTIFY_SINK_TYPES].sort());
    for (const [type, adapter] of Object.entries(SINKS)) expect(adapter.type).toBe(type);
  });
});
