import { mkdir, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AlertsDocCache,
  alertsDocProblem,
  alertsDocText,
} from '../../../../src/intake/webhooks/alerts-file.js';
import type { AlertEntry, AlertsDoc } from '../../../../src/intake/webhooks/disk.js';
import { ALERTS_FILE } from '../../../../src/workspace/layout.js';
import { tempRoot } from '../../../support/incidents.js';

// alerts.json as intake writes it: the same bytes as JSON.stringify(doc, null, 2) with each stored
// alert serialized once, and the parsed files kept between batches only while the file is unchanged.

const entry = (i: number, extra: Partial<AlertEntry> = {}): AlertEntry => ({
  key: `alertmanager:fp${i}:2026-11-22T01:00:00.000Z`,
  receivedAt: '2026-11-27T06:00:00.000Z',
  status: 'firing',
  source: 'alertmanager',
  group: { namespace: `ns-${i}`, alertname: 'KubePodCrashLooping' },
  alert: {
    labels: { pod: `api-${i}`, quote: 'say "hi"\nthen\ttab', unicode: 'Grüße 😀 \u2028' },
    annotations: { description: 'multi\nline', empty: '' },
    values: [1, 2.5, null, true, { nested: [] }, []],
  },
  ...extra,
});

const doc = (alerts: AlertEntry[]): AlertsDoc => ({
  version: 1,
  firstAt: '2026-11-27T06:00:00.000Z',
  lastAt: '2026-11-27T06:00:01.000Z',
  count: alerts.length,
  omitted: 0,
  open: alerts.length,
  alerts,
});

describe('alertsDocText', () => {
  it('is byte for byte JSON.stringify(doc, null, 2): no alerts, one, many, an alias, escapes and unicode', () => {
    for (const d of [
      doc([]),
      doc([entry(1)]),
      doc(Array.from({ length: 25 }, (_, i) => entry(i))),
      doc([entry(2, { alias: 'pagerduty:incident:P1' })]),
    ])
      expect(alertsDocText(d)).toBe(JSON.stringify(d, null, 2));
  });

  it('keeps the members in the order the doc has them, as a doc read from someone else’s file does', () => {
    const reordered = JSON.parse(
      JSON.stringify({
        alerts: [entry(3)],
        count: 1,
        version: 1,
        open: 0,
        resolvedAt: '2026-11-27T07:00:00.000Z',
        omitted: 0,
      }),
    ) as AlertsDoc;
    expect(alertsDocText(reordered)).toBe(JSON.stringify(reordered, null, 2));
  });

  it('writes a list edited by hand into something other than alerts as it stands', () => {
    const edited = doc([entry(1)]);
    (edited.alerts as unknown[]).push(null, 'text', 42, [entry(2)]);
    expect(alertsDocText(edited)).toBe(JSON.stringify(edited, null, 2));
  });

  it('writes an alert again once it resolves, and a member added later at its place', () => {
    const d = doc([entry(1), entry(2)]);
    expect(alertsDocText(d)).toBe(JSON.stringify(d, null, 2));
    const second = d.alerts[1]!;
    second.status = 'resolved';
    second.resolvedAt = '2026-11-27T06:30:00.000Z';
    d.open = 1;
    d.resolvedAt = '2026-11-27T06:30:00.000Z';
    d.alerts.push(entry(4));
    const text = alertsDocText(d);
    expect(text).toBe(JSON.stringify(d, null, 2));
    expect((JSON.parse(text) as AlertsDoc).alerts[1]).toMatchObject({
      status: 'resolved',
      resolvedAt: '2026-11-27T06:30:00.000Z',
    });
  });
});

describe('alertsDocProblem', () => {
  it('accepts what intake writes, resolved or not, and names the first thing wrong with anything else', () => {
    expect(alertsDocProblem(doc([]))).toBeUndefined();
    expect(
      alertsDocProblem({ ...doc([entry(1, { status: 'resolved', resolvedAt: 'x' })]), resolvedAt: 'x' }),
    ).toBeUndefined();
    const cases: [unknown, string][] = [
      [null, 'it is not a JSON object'],
      [[doc([])], 'it is not a JSON object'],
      [{ ...doc([]), version: 2 }, '"version" is 2, not 1'],
      [{ ...doc([]), version: undefined }, '"version" is missing, not 1'],
      [{ ...doc([]), lastAt: 5 }, '"lastAt" is not a string'],
      [{ ...doc([]), resolvedAt: true }, '"resolvedAt" is not a string'],
      [{ ...doc([]), open: 1.5 }, '"open" is not a whole number'],
      [{ ...doc([]), alerts: {} }, '"alerts" is not a list'],
      [
        { ...doc([entry(1)]), alerts: [entry(1), 'text'] },
        'alerts[1] is not a stored alert (an object with a "key" and a "status" of firing or resolved)',
      ],
      [
        { ...doc([]), alerts: [{ ...entry(1), status: 'pending' }] },
        'alerts[0] is not a stored alert (an object with a "key" and a "status" of firing or resolved)',
      ],
    ];
    for (const [value, problem] of cases)
      expect(alertsDocProblem(value), JSON.stringify(value)).toBe(problem);
  });
});

describe('AlertsDocCache', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let dir: string;
  beforeEach(async () => {
    ({ root, cleanup } = await tempRoot('triage-alerts-file-'));
    dir = path.join(root, 'incident-a');
    await mkdir(dir);
  });
  afterEach(async () => cleanup());

  const file = () => path.join(dir, ALERTS_FILE);
  /** Replaces alerts.json the way another replica does: a new file renamed over it. */
  const replace = async (d: AlertsDoc) => {
    await writeFile(`${file()}.tmp`, JSON.stringify(d, null, 2));
    await rename(`${file()}.tmp`, file());
  };

  it('answers an unchanged file from memory: the same parsed doc, not a new parse', async () => {
    await replace(doc([entry(1)]));
    const cache = new AlertsDocCache();
    const first = cache.read(dir);
    expect(first?.alerts).toHaveLength(1);
    expect(cache.read(dir)).toBe(first);
  });

  it('reads the file again once another process replaced it, or it was edited in place', async () => {
    await replace(doc([entry(1)]));
    const cache = new AlertsDocCache();
    cache.read(dir);
    await replace(doc([entry(1), entry(2)]));
    expect(cache.read(dir)?.alerts).toHaveLength(2);

    // Edited in place, same inode: its size and modification time changed.
    await writeFile(file(), JSON.stringify(doc([entry(1), entry(2), entry(3)])));
    await utimes(file(), new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    expect(cache.read(dir)?.alerts).toHaveLength(3);
  });

  it('after its own write it answers from memory, with what it wrote', async () => {
    const cache = new AlertsDocCache();
    const d = doc([entry(1)]);
    await writeFile(file(), alertsDocText(d));
    cache.wrote(dir, d);
    expect(cache.read(dir)).toBe(d);
  });

  it('null for a removed file, text that is not JSON, a folder in the file’s place, and a file in the folder’s', async () => {
    const cache = new AlertsDocCache();
    await replace(doc([entry(1)]));
    cache.read(dir);
    await rm(file());
    expect(cache.read(dir)).toBeNull();
    await writeFile(file(), '{"version": 1, "alerts": [');
    expect(cache.read(dir)).toBeNull();
    await rm(file());
    await mkdir(file());
    expect(cache.read(dir)).toBeNull();
    await rm(file(), { recursive: true });
    await writeFile(file(), JSON.stringify(doc([entry(1)])));
    expect(cache.read(dir)?.alerts).toHaveLength(1);
    await rm(dir, { recursive: true });
    await writeFile(dir, 'a file where the incident folder was'); // ENOTDIR, not a throw
    expect(cache.read(dir)).toBeNull();
    expect(cache.size).toBe(0);
  });

  it('tells a file that is there but not a doc (or not a file, or a link) once per version, and reads it again once fixed', async () => {
    const told: [string, string][] = [];
    const cache = new AlertsDocCache({
      maxReadBytes: 4096,
      onMalformed: (f, problem) => told.push([f, problem]),
    });
    await writeFile(file(), '{"version": 1, "alerts": [');
    expect(cache.read(dir)).toBeNull();
    expect(cache.read(dir)).toBeNull();
    expect(told).toEqual([[file(), expect.stringMatching(/^it is not JSON \(/)]]);
    await writeFile(file(), JSON.stringify({ ...doc([entry(1)]), alerts: [entry(1), null] }));
    expect(cache.read(dir)).toBeNull();
    expect(told[1]).toEqual([
      file(),
      'alerts[1] is not a stored alert (an object with a "key" and a "status" of firing or resolved)',
    ]);
    await writeFile(file(), 'x'.repeat(4097));
    expect(cache.read(dir)).toBeNull();
    expect(told[2]).toEqual([file(), 'it is 4097 bytes, over the 4096 intake reads']);
    // A link to another file is not followed, whatever the file holds; a folder is not a file.
    await writeFile(path.join(root, 'elsewhere.json'), alertsDocText(doc([entry(2)])));
    await rm(file());
    await symlink(path.join(root, 'elsewhere.json'), file());
    expect(cache.read(dir)).toBeNull();
    expect(cache.read(dir)).toBeNull();
    expect(told[3]).toEqual([file(), 'it is a symbolic link, which intake does not follow']);
    await rm(file());
    await mkdir(file());
    expect(cache.read(dir)).toBeNull();
    expect(told[4]).toEqual([file(), 'it is not a regular file']);
    await rm(file(), { recursive: true });
    await replace(doc([entry(1)]));
    expect(cache.read(dir)?.alerts).toHaveLength(1);
    expect(told).toHaveLength(5);
  });

  it('does not answer from memory once the file it read is moved away and linked to', async () => {
    const cache = new AlertsDocCache();
    await replace(doc([entry(1)]));
    expect(cache.read(dir)?.alerts).toHaveLength(1);
    // The same inode, size and modification time, now reached through a link.
    await rename(file(), path.join(root, 'moved.json'));
    await symlink(path.join(root, 'moved.json'), file());
    expect(cache.read(dir)).toBeNull();
  });

  it('holds at most maxBytes of files: the least recently used go first', async () => {
    const text = JSON.stringify(doc([entry(1)]), null, 2);
    const cache = new AlertsDocCache({ maxBytes: Buffer.byteLength(text) * 2 });
    const dirs = ['a', 'b', 'c'].map((n) => path.join(root, n));
    for (const d of dirs) {
      await mkdir(d);
      await writeFile(path.join(d, ALERTS_FILE), text);
    }
    const a = cache.read(dirs[0]!);
    const b = cache.read(dirs[1]!);
    expect(cache.read(dirs[0]!)).toBe(a); // a is now the most recent
    cache.read(dirs[2]!); // evicts b
    expect(cache.size).toBe(2);
    expect(cache.read(dirs[0]!)).toBe(a);
    expect(cache.read(dirs[1]!)).not.toBe(b); // read afresh
  });
});
