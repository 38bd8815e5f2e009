import type { z } from '../shared/zod.js';
import { configSchema } from './schema.js';

// Walks the zod schema so that environment names, documentation and "did you mean" hints are
// derived from the one schema instead of being listed by hand.

export type LeafKind = 'string' | 'number' | 'boolean' | 'enum' | 'duration' | 'array' | 'record' | 'other';

export interface ConfigKey {
  /** Key path as written in YAML, e.g. ['agent', 'timeout']. */
  path: string[];
  kind: LeafKind;
  description: string | undefined;
  /** For enums, the accepted values. */
  values?: string[];
}

interface ZodDefLike {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  options?: z.ZodType[];
  entries?: Record<string, string>;
  schema?: z.ZodType;
}

const defOf = (schema: z.ZodType): ZodDefLike =>
  (schema as unknown as { _zod: { def: ZodDefLike } })._zod.def;

/** Strips default/optional/transform wrappers down to the schema that describes the value. */
export function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let i = 0; i < 20; i++) {
    const def = defOf(current);
    if (
      def.innerType &&
      ['default', 'prefault', 'optional', 'nullable', 'readonly', 'catch'].includes(def.type)
    ) {
      current = def.innerType;
    } else if (def.type === 'pipe' && def.in) {
      current = def.in;
    } else {
      return current;
    }
  }
  return current;
}

function describe(schema: z.ZodType): string | undefined {
  let current: z.ZodType | undefined = schema;
  for (let i = 0; current && i < 20; i++) {
    if (current.description) return current.description;
    const def = defOf(current);
    current = def.innerType ?? def.in;
  }
  return undefined;
}

function kindOf(schema: z.ZodType): { kind: LeafKind; values?: string[] } {
  const def = defOf(unwrap(schema));
  switch (def.type) {
    case 'string':
      return { kind: 'string' };
    case 'number':
      return { kind: 'number' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'enum':
      return { kind: 'enum', values: Object.values(def.entries ?? {}) };
    case 'union': {
      const types = (def.options ?? []).map((o) => defOf(o).type);
      return types.includes('string') && types.includes('number') ? { kind: 'duration' } : { kind: 'other' };
    }
    case 'array':
      return { kind: 'array' };
    case 'record':
      return { kind: 'record' };
    default:
      return { kind: 'other' };
  }
}

/** Child object schema at a key, or undefined when the key is a leaf. */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  const def = defOf(unwrap(schema));
  return def.type === 'object' ? def.shape : undefined;
}

/** Every leaf key of the configuration schema, depth first, in declaration order. */
export function configKeys(schema: z.ZodType = configSchema, prefix: string[] = []): ConfigKey[] {
  const shape = objectShape(schema);
  if (!shape) return [];
  const keys: ConfigKey[] = [];
  for (const [name, child] of Object.entries(shape)) {
    const path = [...prefix, name];
    if (objectShape(child)) keys.push(...configKeys(child, path));
    else keys.push({ path, description: describe(child), ...kindOf(child) });
  }
  return keys;
}

/** Keys allowed directly under an object path (for "did you mean" on unknown keys). */
export function keysAt(path: (string | number)[], schema: z.ZodType = configSchema): string[] {
  let current: z.ZodType | undefined = schema;
  for (const part of path) {
    if (!current) return [];
    const def = defOf(unwrap(current));
    if (def.type === 'object') current = def.shape?.[String(part)];
    else if (def.type === 'array' && typeof part === 'number')
      current = (def as { element?: z.ZodType }).element;
    else if (def.type === 'record') current = (def as { valueType?: z.ZodType }).valueType;
    else return [];
  }
  return current ? Object.keys(objectShape(current) ?? {}) : [];
}

/** `agent.timeout` → `TRIAGE_RUNNER_AGENT_TIMEOUT`. */
export function envName(path: string[]): string {
  return `TRIAGE_RUNNER_${path.join('_').toUpperCase()}`;
}
