import { describe, expect, it } from 'vitest';
import { workloadsNote } from '../../../src/context/sections.js';
import {
  countWorkload,
  listWorkloads,
  workloadsFrom,
  workloadsProblem,
  type IncidentWorkload,
} from '../../../src/workspace/workloads.js';

// The workloads behind a storm's incident: counted as intake stores alerts, read loosely, and named
// bounded (with the count of the rest) in notifications and the prompt.

const deployment = (name: string) => ({ kind: 'Deployment', name, namespace: 'shop' });

describe('incident workloads', () => {
  it('counts each workload once, in the order they first alerted, and stops adding new ones at the bound', () => {
    const list: IncidentWorkload[] = [];
    for (const name of ['cart', 'pricing', 'cart', 'tax', 'promo', 'cart'])
      countWorkload(list, deployment(name), 3);
    expect(list).toEqual([
      { ...deployment('cart'), alerts: 3 },
      { ...deployment('pricing'), alerts: 1 },
      { ...deployment('tax'), alerts: 1 },
    ]);
  });

  it('tells a Deployment from a StatefulSet of the same name, and a namespace from another', () => {
    const list: IncidentWorkload[] = [];
    countWorkload(list, deployment('db'), 10);
    countWorkload(list, { kind: 'StatefulSet', name: 'db', namespace: 'shop' }, 10);
    countWorkload(list, { kind: 'Deployment', name: 'db', namespace: 'billing' }, 10);
    countWorkload(list, { kind: 'Node', name: 'node-1' }, 10);
    expect(list.map((w) => [w.kind, w.namespace ?? null, w.name])).toEqual([
      ['Deployment', 'shop', 'db'],
      ['StatefulSet', 'shop', 'db'],
      ['Deployment', 'billing', 'db'],
      ['Node', null, 'node-1'],
    ]);
  });

  it('names at most the bound and counts the rest', () => {
    const list = ['cart', 'pricing', 'tax', 'promo'].map((n, i) => ({
      ...deployment(n),
      alerts: i === 0 ? 2 : 1,
    }));
    expect(listWorkloads(list, 2)).toBe(
      'Deployment shop/cart (2 alerts), Deployment shop/pricing and 2 more workloads',
    );
    expect(listWorkloads(list, 10)).toBe(
      'Deployment shop/cart (2 alerts), Deployment shop/pricing, Deployment shop/tax, Deployment shop/promo',
    );
  });

  it('reads a hand-edited list loosely, and says what is wrong with one intake cannot count in', () => {
    expect(workloadsFrom([{ kind: 'Deployment', name: 'cart', alerts: 2 }, 'junk', { kind: '' }])).toEqual([
      { kind: 'Deployment', name: 'cart', alerts: 2 },
    ]);
    expect(workloadsFrom(undefined)).toBeUndefined();
    expect(workloadsProblem(undefined)).toBeUndefined();
    expect(workloadsProblem({})).toBe('"workloads" is not a list');
    expect(workloadsProblem([{ kind: 'Deployment', name: 'cart' }])).toBe(
      'workloads[0] is not a workload (an object with "kind", "name" and "alerts")',
    );
  });

  it("lists a storm's workloads for the prompt, 25 at most with the count of the rest; nothing for one workload", () => {
    expect(workloadsNote([{ ...deployment('cart'), alerts: 1 }])).toBeUndefined();
    const many = Array.from({ length: 30 }, (_, i) => ({ ...deployment(`w${i}`), alerts: 1 }));
    const note = workloadsNote(many) ?? '';
    expect(note).toContain('alerts of 30 workloads');
    expect(note).toContain('- Deployment shop/w24 (1 alert)');
    expect(note).not.toContain('shop/w25');
    expect(note).toMatch(/- and 5 more workloads \(in alerts\.json\)$/);
  });
});
