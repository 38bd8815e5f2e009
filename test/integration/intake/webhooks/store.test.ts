import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../../../src/config/schema.js';
import type { Logger } from '../../../../src/log/logger.js';
import { readIncidentFolders } from '../../../support/webhooks/folders.js';
import { incidentSchema } from '../../../../src/workspace/incident-schema.js';
import { mapAlertmanager } from '../../../../src/intake/webhooks/alertmanager.js';
import type { AlertsDoc } from '../../../../src/intake/webhooks/disk.js';
import { readOnlyHooks, type IntakeHooks } from '../../../../src/intake/webhooks/hooks.js';
import { IntakeStore } from '../../../../src/intake/webhooks/store.js';
import { groupingOptions } from '../../../../src/server/routes/intake.js';
import { tempRoot } from '../../../support/incidents.js';
import { amAlert, amPayload } from '../../../support/webhooks/alerts.js';

// The intake store on a real filesystem: atomic workspaces, idempotency across restarts and replicas,
// storm grouping, resolutions.

let root: string;
let cleanup: () => Promise<void>;
let stores: IntakeStore[] = [];

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-webhooks-'));
});
afterEach(async () => {
  for (const s of stores) s.close();
  stores = [];
  await cleanup();
});

const config = configSchema.parse({});
const grouping = groupingOptions(config);

function makeStore(
  options: {
    daemonId?: string;
    now?: () => number;
    hooks?: IntakeHooks;
    stormLimit?: number;
    ttl?: number;
    log?: Logger;
  } = {},
) {
  const store = new IntakeStore({
    root,
    windowMs: 600_000,
    idempotencyTtlMs: options.ttl ?? 86_400_000,
    stormLimit: options.stormLimit ?? 3,
    maxAlertsPerIncident: 500,
    hooks: options.hooks ?? readOnlyHooks(),
    identity: { daemonId: options.daemonId ?? 'store-a' },
    sweepIntervalMs: 0,
    ...(options.now ? { now: options.now } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  stores.push(store);
  return store;
}

const alerts = (list: ReturnType<typeof amAlert>[]) => mapAlertmanager(amPayload(list), grouping);

const readDoc = async (workspace: string) =>
  JSON.parse(await readFile(path.join(root, workspace, 'alerts.json'), 'utf8')) as AlertsDoc;

describe('intake store', () => {
  it('writes a workspace the daemon accepts: a valid incident.json and the original alert in alerts.json', async () => {
    const store = makeStore();
    const alert = amAlert({
      namespace: 'shop',
      pod: 'web-7d4b9c8f6d-x2x9k',
      cluster: 'prod-1',
      severity: 'critical',
    });
    const [outcome] = await store.submitAlerts(alerts([alert]));
    expect(outcome).toMatchObject({ status: 'created' });
    const folders = await readIncidentFolders(root);
    expect(folders).toEqual([outcome!.workspace]);
    expect(outcome!.workspace).toMatch(/^\d{8}T\d{6}Z-KubePodCrashLooping-shop-web-[0-9a-f]{8}$/);
    const incident = incidentSchema.parse(
      JSON.parse(await readFile(path.join(root, outcome!.workspace!, 'incident.json'), 'utf8')),
    );
    expect(incident).toMatchObject({
      incidentId: outcome!.incidentId,
      cluster: 'prod-1',
      namespace: 'shop',
      resource: { kind: 'Pod', name: 'web-7d4b9c8f6d-x2x9k', namespace: 'shop' },
      workload: { kind: 'Deployment', name: 'web' },
      faultType: 'CrashLoop',
      severity: 'critical',
      timestamp: alert.startsAt,
      source: { type: 'alertmanager', id: alert.fingerprint, url: alert.generatorURL },
    });
    const doc = await readDoc(outcome!.workspace!);
    expect(doc).toMatchObject({ count: 1, open: 1, omitted: 0 });
    expect(doc.alerts[0]?.alert).toEqual(alert);
    // Nothing but workspaces (and the store's own dot folder) under the root; no temp leftovers.
    expect((await readdir(root)).sort()).toEqual(['.triage', outcome!.workspace].sort());
    expect(await readdir(store.paths.tmp)).toEqual([]);
  });

  it('a duplicate delivery, also after a restart and from another replica, never makes a second workspace', async () => {
    const alert = amAlert({ namespace: 'shop', pod: 'api-5d59d67564-abcde' });
    const [first] = await makeStore().submitAlerts(alerts([alert]));
    const [again] = await makeStore().submitAlerts(alerts([alert])); // a restarted process
    const [replica] = await makeStore({ daemonId: 'store-b' }).submitAlerts(alerts([alert]));
    expect(again).toEqual({
      status: 'duplicate',
      incidentId: first!.incidentId,
      workspace: first!.workspace,
    });
    expect(replica).toEqual(again);
    expect(await readIncidentFolders(root)).toHaveLength(1);
    expect((await readDoc(first!.workspace!)).count).toBe(1);
  });

  it('two replicas receiving the same 20 deliveries at once create each incident once', async () => {
    const list = Array.from({ length: 20 }, (_, i) =>
      amAlert({ namespace: `ns-${i}`, pod: `app-${i}-5d59d67564-abcde`, alertname: `Alert${i}` }),
    );
    const a = makeStore({ daemonId: 'replica-a' });
    const b = makeStore({ daemonId: 'replica-b' });
    const results = await Promise.all(
      list.flatMap((alert) => [a, b].map((s) => s.submitAlerts(alerts([alert])))),
    );
    const statuses = results.flat().map((o) => o.status);
    expect(statuses.filter((s) => s === 'created')).toHaveLength(20);
    expect(statuses.filter((s) => s === 'duplicate')).toHaveLength(20);
    expect(await readIncidentFolders(root)).toHaveLength(20);
  });

  it('a storm of 30 alerts for one workload makes one incident holding all 30', async () => {
    const store = makeStore();
    const storm = Array.from({ length: 30 }, (_, i) =>
      amAlert(
        {
          namespace: 'shop',
          pod: `web-7d4b9c8f6d-${'bcdfg'.slice(0, 4)}${'bcdfghjklmnpqrstvwxz2456789'[i % 27]}`,
        },
        {
          startsAt: new Date(Date.UTC(2026, 10, 22, 1, 0, i)).toISOString(),
        },
      ),
    );
    // Some in one webhook, the rest one per request, all at once.
    const outcomes = (
      await Promise.all([
        store.submitAlerts(alerts(storm.slice(0, 10))),
        ...storm.slice(10).map((a) => store.submitAlerts(alerts([a]))),
      ])
    ).flat();
    expect(outcomes.filter((o) => o.status === 'created')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'joined')).toHaveLength(29);
    const folders = await readIncidentFolders(root);
    expect(folders).toHaveLength(1);
    const doc = await readDoc(folders[0]!);
    expect(doc).toMatchObject({ count: 30, open: 30 });
    expect(new Set(doc.alerts.map((a) => a.key)).size).toBe(30);
  });

  it('one failure across 40 workloads (a registry outage) opens storm_limit incidents, the rest join the latest', async () => {
    const store = makeStore({ stormLimit: 3 });
    const outage = Array.from({ length: 40 }, (_, i) =>
      amAlert({
        alertname: 'KubeContainerWaiting',
        reason: 'ImagePullBackOff',
        namespace: `team-${i % 5}`,
        pod: `svc${i}-5d59d67564-abcde`,
      }),
    );
    const outcomes = (await Promise.all(outage.map((a) => store.submitAlerts(alerts([a]))))).flat();
    expect(outcomes.filter((o) => o.status === 'created')).toHaveLength(3);
    expect(outcomes.filter((o) => o.storm)).toHaveLength(37);
    const folders = await readIncidentFolders(root);
    expect(folders).toHaveLength(3);
    const incident = JSON.parse(await readFile(path.join(root, folders[0]!, 'incident.json'), 'utf8')) as {
      faultType: string;
    };
    expect(incident.faultType).toBe('ImagePullBackOff');
  });

  it('alerts of one group after the window open a new incident', async () => {
    let now = Date.parse('2026-11-22T01:00:00Z');
    const store = makeStore({ now: () => now });
    const labels = { namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' };
    const [first] = await store.submitAlerts(alerts([amAlert(labels, { startsAt: '2026-11-22T01:00:00Z' })]));
    now += 11 * 60_000;
    const [later] = await store.submitAlerts(alerts([amAlert(labels, { startsAt: '2026-11-22T01:11:00Z' })]));
    expect(later!.status).toBe('created');
    expect(later!.workspace).not.toBe(first!.workspace);
  });

  it('records a resolution in alerts.json and reports the incident resolved once all its alerts are', async () => {
    const resolved: string[] = [];
    const store = makeStore({
      hooks: readOnlyHooks((dir, at) => resolved.push(`${path.basename(dir)}@${at}`)),
    });
    const a = amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' });
    const b = amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-q2w4z' });
    const [created] = await store.submitAlerts(alerts([a, b]));
    const endsAt = '2026-11-22T01:05:00.000Z';
    await store.submitAlerts(alerts([{ ...a, status: 'resolved', endsAt }]));
    expect(resolved).toEqual([]);
    expect((await readDoc(created!.workspace!)).open).toBe(1);
    const [last] = await store.submitAlerts(alerts([{ ...b, status: 'resolved', endsAt }]));
    expect(last).toMatchObject({ status: 'resolved', workspace: created!.workspace });
    expect(resolved).toEqual([`${created!.workspace}@${endsAt}`]);
    const doc = await readDoc(created!.workspace!);
    expect(doc).toMatchObject({ open: 0, resolvedAt: endsAt });
    expect(doc.alerts.map((x) => x.status)).toEqual(['resolved', 'resolved']);
    // Redelivered resolution: nothing more. Unknown alert: ignored with a reason.
    await store.submitAlerts(alerts([{ ...b, status: 'resolved', endsAt }]));
    expect(resolved).toHaveLength(1);
    const [unknown] = await store.submitAlerts(
      alerts([amAlert({ pod: 'other' }, { status: 'resolved', endsAt })]),
    );
    expect(unknown).toMatchObject({
      status: 'ignored',
      reason: expect.stringMatching(/no incident holds this alert/),
    });
    // The group fires again: a resolved incident takes no more alerts, a new one opens.
    const [again] = await store.submitAlerts(
      alerts([
        amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' }, { startsAt: '2026-11-22T01:06:00.000Z' }),
      ]),
    );
    expect(again!.status).toBe('created');
  });

  it('an alerts.json edited by hand into something else fails no batch: its incident takes no more alerts, and says why', async () => {
    const warnings: { file: string; problem: string }[] = [];
    const log = {
      warn: (fields: { file: string; problem: string }) => warnings.push(fields),
    } as unknown as Logger;
    const malformed: [string, string, RegExp][] = [
      ['not JSON', '{"version": 1, "alerts": [', /not JSON/],
      ['a list', '[]', /not a JSON object/],
      [
        'no alerts list',
        JSON.stringify({
          version: 1,
          firstAt: 'x',
          lastAt: 'x',
          count: 1,
          open: 1,
          omitted: 0,
          alerts: null,
        }),
        /"alerts"/,
      ],
      [
        'a null alert',
        JSON.stringify({
          version: 1,
          firstAt: 'x',
          lastAt: 'x',
          count: 2,
          open: 2,
          omitted: 0,
          alerts: [null],
        }),
        /alerts\[0\]/,
      ],
      [
        'counts as text',
        JSON.stringify({
          version: 1,
          firstAt: 'x',
          lastAt: 'x',
          count: '1',
          open: 1,
          omitted: 0,
          alerts: [],
        }),
        /"count"/,
      ],
    ];
    for (const [i, [what, text, problem]] of malformed.entries()) {
      warnings.length = 0;
      const store = makeStore({ log });
      const ns = `shop-${i}`;
      const first = amAlert({ namespace: ns, pod: 'web-7d4b9c8f6d-x2x9k' });
      const [created] = await store.submitAlerts(alerts([first]));
      const file = path.join(root, created!.workspace!, 'alerts.json');
      await writeFile(file, text);
      // Another pod of the group fires, and the first alert resolves, in one webhook and again.
      const batch = alerts([
        amAlert({ namespace: ns, pod: 'web-7d4b9c8f6d-q2w4z' }),
        { ...first, status: 'resolved', endsAt: '2026-11-22T01:05:00.000Z' },
      ]);
      for (let round = 0; round < 2; round++) {
        const [joined, resolved] = await store.submitAlerts(batch);
        expect(joined, what).toMatchObject({ status: round === 0 ? 'created' : 'duplicate' });
        expect(joined!.workspace, what).not.toBe(created!.workspace);
        expect(resolved, what).toMatchObject({
          status: 'ignored',
          reason: expect.stringContaining(`${created!.workspace}/alerts.json`),
        });
      }
      expect(await readFile(file, 'utf8'), what).toBe(text);
      // Said once per version of the file, naming it and what is wrong.
      expect(warnings, what).toEqual([{ file, problem: expect.stringMatching(problem) }]);
    }
  });

  it('a storm record with damaged incidents fails no batch: the ones as written still group, the others are left out', async () => {
    const store = makeStore();
    const first = amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' });
    const [created] = await store.submitAlerts(alerts([first]));
    const [file] = await readdir(store.paths.storms);
    const record = JSON.parse(await readFile(path.join(store.paths.storms, file!), 'utf8')) as {
      incidents: unknown[];
    };
    const [good] = record.incidents as Record<string, unknown>[];
    record.incidents.push(
      null,
      'text',
      { ...good, workspace: '../outside' },
      { ...good, createdAt: 'soon' },
      { ...good, groups: [null] },
    );
    await writeFile(path.join(store.paths.storms, file!), JSON.stringify(record));
    const [joined] = await store.submitAlerts(
      alerts([amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-q2w4z' })]),
    );
    expect(joined).toMatchObject({ status: 'joined', workspace: created!.workspace });
  });

  it('a delivery key naming a folder intake never makes is not followed out of the root', async () => {
    const store = makeStore();
    const alert = amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' });
    const [created] = await store.submitAlerts(alerts([alert]));
    const outside = path.join(root, '..', `outside-${path.basename(root)}`);
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, 'alerts.json'), JSON.stringify(await readDoc(created!.workspace!)));
    try {
      // Every key file now points at the folder beside the root.
      for (const name of await readdir(store.paths.keys)) {
        const keyFile = path.join(store.paths.keys, name);
        const record = JSON.parse(await readFile(keyFile, 'utf8')) as Record<string, unknown>;
        await writeFile(keyFile, JSON.stringify({ ...record, workspace: `../${path.basename(outside)}` }));
      }
      const [resolved] = await store.submitAlerts(
        alerts([{ ...alert, status: 'resolved', endsAt: '2026-11-22T01:05:00.000Z' }]),
      );
      expect(resolved).toMatchObject({ status: 'ignored' });
      expect((JSON.parse(await readFile(path.join(outside, 'alerts.json'), 'utf8')) as AlertsDoc).open).toBe(
        1,
      );
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('two replicas taking turns on one incident each see the other’s alerts (a kept alerts.json is read again once another process wrote it)', async () => {
    const a = makeStore({ daemonId: 'replica-a' });
    const b = makeStore({ daemonId: 'replica-b' });
    const pods = ['x2x9k', 'q2w4z', 'b4c5d', 'f6g7h', 'j8k9l', 'm2n4p'];
    const outcomes = [];
    for (const [i, pod] of pods.entries())
      outcomes.push(
        ...(await [a, b][i % 2]!.submitAlerts(
          alerts([amAlert({ namespace: 'shop', pod: `web-7d4b9c8f6d-${pod}` })]),
        )),
      );
    expect(outcomes.map((o) => o.status)).toEqual([
      'created',
      'joined',
      'joined',
      'joined',
      'joined',
      'joined',
    ]);
    const doc = await readDoc(outcomes[0]!.workspace!);
    expect(doc.count).toBe(6);
    expect(doc.alerts.map((x) => (x.alert as { labels: { pod: string } }).labels.pod)).toEqual(
      pods.map((p) => `web-7d4b9c8f6d-${p}`),
    );
  });

  it('a batch that fails to write leaves nothing changed in memory: redelivered, the resolution is recorded and reported', async () => {
    const resolved: string[] = [];
    const store = makeStore({ hooks: readOnlyHooks((dir) => resolved.push(path.basename(dir))) });
    const firing = amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' });
    const [created] = await store.submitAlerts(alerts([firing]));
    // One webhook: the alert resolves (its incident's alerts.json, kept parsed, is changed) and another
    // group of the same storm key fires (its storm record must be written first, and cannot be).
    const webhook = alerts([
      { ...firing, status: 'resolved', endsAt: '2026-11-22T01:05:00.000Z' },
      amAlert({ namespace: 'billing', pod: 'api-5d59d67564-abcde' }),
    ]);
    await rm(store.paths.storms, { recursive: true });
    await writeFile(store.paths.storms, 'not a folder');
    await expect(store.submitAlerts(webhook)).rejects.toThrow(/ENOTDIR/);
    expect((await readDoc(created!.workspace!)).open).toBe(1);

    await rm(store.paths.storms);
    await mkdir(store.paths.storms);
    const [resolution, other] = await store.submitAlerts(webhook);
    expect(resolution).toEqual({
      status: 'resolved',
      incidentId: created!.incidentId,
      workspace: created!.workspace,
    });
    expect(other!.status).toBe('created');
    expect(resolved).toEqual([created!.workspace]);
    expect(await readDoc(created!.workspace!)).toMatchObject({
      open: 0,
      resolvedAt: '2026-11-22T01:05:00.000Z',
    });
  });

  it('a batch that fails does not end while its other writes run: the next batch cannot be undone by them', async () => {
    const store = makeStore();
    const [created] = await store.submitAlerts(
      alerts([amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-x2x9k' })]),
    );
    // One webhook: an alert joining that incident (its alerts.json is rewritten) and a new group, whose
    // workspace cannot be made (the temp folder is a file).
    const joining = amAlert({ namespace: 'shop', pod: 'web-7d4b9c8f6d-q2w4z' });
    const webhook = alerts([joining, amAlert({ namespace: 'billing', pod: 'api-5d59d67564-abcde' })]);
    await rm(store.paths.tmp, { recursive: true });
    await writeFile(store.paths.tmp, 'not a folder');
    await expect(store.submitAlerts(webhook)).rejects.toThrow(/ENOTDIR|EEXIST/);
    // Read at once, before any file call still running could finish: the joining write is done.
    const file = path.join(root, created!.workspace!, 'alerts.json');
    expect((JSON.parse(readFileSync(file, 'utf8')) as AlertsDoc).count).toBe(2);

    await rm(store.paths.tmp);
    await mkdir(store.paths.tmp);
    const [again, other] = await store.submitAlerts(webhook);
    expect(again).toMatchObject({ status: 'duplicate', workspace: created!.workspace });
    expect(other!.status).toBe('created');
    const doc = await readDoc(created!.workspace!);
    expect(doc.alerts.map((a) => a.key)).toEqual([...new Set(doc.alerts.map((a) => a.key))]);
    expect(doc.count).toBe(2);
  });

  it('forgets delivery keys not seen for idempotency_ttl', async () => {
    let now = Date.now();
    const store = makeStore({ now: () => now, ttl: 1000 });
    const alert = amAlert({ pod: 'x' });
    await store.submitAlerts(alerts([alert]));
    expect(await store.sweep()).toMatchObject({ keys: 0 });
    now += 5000;
    const swept = await store.sweep();
    expect(swept.keys).toBe(1);
  });
});
