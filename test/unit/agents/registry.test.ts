import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENTS, getAgent } from '../../../src/agents/index.js';
import { AGENT_NAMES } from '../../../src/config/schema.js';

const AGENTS_DIR = join(import.meta.dirname, '..', '..', '..', 'src', 'agents');

describe('agent registry', () => {
  it('has exactly one adapter per module in src/agents and per configurable agent name', () => {
    const modules = readdirSync(AGENTS_DIR)
      .filter((f) => f.endsWith('.ts') && f !== 'index.ts' && f !== 'types.ts')
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(AGENTS).sort()).toEqual(modules);
    expect(Object.keys(AGENTS).sort()).toEqual([...AGENT_NAMES].sort());
  });

  it('registers each adapter under its own id', () => {
    for (const [key, adapter] of Object.entries(AGENTS)) expect(adapter.id).toBe(key);
  });

  it('returns the adapter for a known id', () => {
    expect(getAgent('gemini')).toBe(AGENTS.gemini);
  });

  it('fails on an unknown id with the list of valid ids', () => {
    expect(() => getAgent('cursor')).toThrow(
      /unknown agent "cursor": expected one of claude, codex, gemini, goose/,
    );
    expect(() => getAgent('toString')).toThrow(/unknown agent/);
  });

  it('gives every adapter writable home folders and skills folders relative to HOME', () => {
    for (const adapter of Object.values(AGENTS)) {
      for (const dir of [...adapter.skillsDirs, ...adapter.writableHomeDirs]) {
        expect(dir.startsWith('/') || dir.includes('..')).toBe(false);
      }
      expect(adapter.skillsDirs.length).toBeGreaterThan(0);
    }
  });
});
