import { utimesSync } from 'node:fs';
import { readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../log/logger.js';
import { errorMessage } from '../../util/errors.js';
import { makeDirs } from '../../util/fs.js';
import { ALERTS_FILE, INCIDENT_FILE } from '../../workspace/layout.js';
import type { LeaseIdentity } from '../../workspace/lease.js';
import type { Incident } from '../../workspace/incident.js';
import { countWorkload, type IncidentWorkload } from '../../workspace/workloads.js';
import {
  createKey,
  createWorkspace,
  fsyncDir,
  hashName,
  intakePaths,
  readKey,
  readStorm,
  replaceKey,
  writeStorm,
  type AlertEntry,
  type AlertsDoc,
  type IntakePaths,
  type KeyRecord,
  type StormIncident,
  type StormRecord,
} from './disk.js';
import { AlertsDocCache, alertsDocChunks, alertsDocText } from './alerts-file.js';
import { writeAlerts } from '../../workspace/alerts.js';
import type { IntakeHooks, IntakeState } from './hooks.js';
import { alertProblem, alertRef, incidentFromAlert } from './incident.js';
import { KeyedQueue } from '../../util/keyed-queue.js';
import { withFileLock } from './locks.js';
import { compactStamp } from '../../util/time.js';
import { folderName } from './names.js';
import type { AlertRef, MappedAlert } from './types.js';
import { allEnded } from '../../util/promises.js';

// HTTP intake's one writer: turns mapped alerts and posted incidents into workspaces exactly like a
// file drop, exactly once. Per storm key, alerts are handled in batches under a lock shared by
// replicas: delivery keys make redeliveries no-ops, alerts of one group join one incident inside the
// window, a storm key opens at most storm_limit incidents, resolutions are recorded and reported.

export interface IntakeStoreOptions {
  root: string;
  /** scheduling.dedup_window: how long a group's incident takes its new alerts. */
  windowMs: number;
  idempotencyTtlMs: number;
  stormLimit: number;
  maxAlertsPerIncident: number;
  hooks: IntakeHooks;
  identity: LeaseIdentity;
  now?: () => number;
  log?: Logger;
  /** How long to wait for another replica's lock on a key (ms). */
  lockTimeoutMs?: number;
  /** How often expired keys, storm records and temp folders are removed (ms); 0 = only on sweep(). */
  sweepIntervalMs?: number;
}

/** `refused`: the alert cannot become an incident (its `reason` says why); the others of its delivery are taken. */
export type IntakeStatus = 'created' | 'joined' | 'duplicate' | 'resolved' | 'ignored' | 'refused';

export interface IntakeOutcome {
  status: IntakeStatus;
  incidentId?: string;
  /** The workspace folder name under the root. */
  workspace?: string;
  /** Joined another group's incident because its storm key had storm_limit incidents open. */
  storm?: true;
  reason?: string;
  /** A refused alert: which one of the delivery. */
  alert?: AlertRef;
}

type Item = { kind: 'alert'; alert: MappedAlert } | { kind: 'incident'; incident: Incident; key: string };

interface Draft {
  name: string;
  incidentId: string;
  incident: Incident;
  doc: AlertsDoc;
}

/** Everything one batch reads and will write, so that each file is read and written once. */
interface Batch {
  now: number;
  nowIso: string;
  /** Storm records touched by the batch (live incidents only), and which of them changed. */
  storms: Map<string, StormRecord>;
  changedStorms: Set<string>;
  /** Delivery keys read ahead, in parallel, for the whole batch. */
  keys: Map<string, KeyRecord | undefined>;
  drafts: Map<string, Draft>;
  docs: Map<string, AlertsDoc | null>;
  changedDocs: Set<string>;
  states: Map<string, IntakeState | undefined>;
  newKeys: Map<string, KeyRecord>;
  aliases: Map<string, KeyRecord>;
  touched: Set<string>;
  resolved: Map<string, string>;
}

const STALE_TMP_MS = 3_600_000;

/**
 * Every alert goes through one queue and one lock (shared by replicas): a batch takes whatever
 * arrived meanwhile, across all storm keys, and commits it with one round of parallel writes and one
 * fsync per folder. Under a burst batches grow, so the cost per alert falls as load rises.
 */
const ALERTS_QUEUE = 'alerts';

export class IntakeStore {
  readonly paths: IntakePaths;
  private readonly options: IntakeStoreOptions;
  private readonly now: () => number;
  private readonly batcher: KeyedQueue<Item, IntakeOutcome>;
  private sweepTimer: NodeJS.Timeout | undefined;
  private ready: Promise<void> | undefined;
  /** alerts.json of the incidents being filled, parsed, between batches. */
  private readonly alertDocs: AlertsDocCache;

  constructor(options: IntakeStoreOptions) {
    this.options = options;
    this.paths = intakePaths(path.resolve(options.root));
    this.now = options.now ?? Date.now;
    this.batcher = new KeyedQueue((key, items) => this.process(key, items));
    this.alertDocs = new AlertsDocCache({
      onMalformed: (file, problem) =>
        options.log?.warn(
          { file, problem },
          'alerts.json is not an alerts document: its incident takes no more alerts (new ones open a new incident) and their resolutions are not recorded there; restore or remove the file',
        ),
    });
    const every = options.sweepIntervalMs ?? Math.min(600_000, Math.max(1000, options.idempotencyTtlMs / 4));
    if (every > 0) {
      this.sweepTimer = setInterval(
        () =>
          void this.sweep().catch((err: unknown) =>
            options.log?.warn({ err: errorMessage(err) }, 'intake sweep failed'),
          ),
        every,
      );
      this.sweepTimer.unref();
    }
  }

  /**
   * Alerts of one delivery (one webhook), one outcome each, in order. An alert that cannot become an
   * incident is refused here, on its own: it never joins a batch, where it would fail every alert
   * written with it (other deliveries' too).
   */
  submitAlerts(alerts: readonly MappedAlert[]): Promise<IntakeOutcome[]> {
    return Promise.all(
      alerts.map((alert, index) => {
        const reason = alertProblem(alert);
        return reason === undefined
          ? this.submit(ALERTS_QUEUE, { kind: 'alert', alert })
          : Promise.resolve<IntakeOutcome>({ status: 'refused', reason, alert: alertRef(alert, index) });
      }),
    );
  }

  /** A posted incident.json; `key` is the Idempotency-Key header or its incidentId. */
  submitIncident(incident: Incident, key: string): Promise<IntakeOutcome> {
    return this.submit(`incident:${key}`, { kind: 'incident', incident, key: `incident:${key}` });
  }

  private async submit(lockKey: string, item: Item): Promise<IntakeOutcome> {
    this.ready ??= Promise.all(
      [this.paths.keys, this.paths.storms, this.paths.locks, this.paths.tmp].map(async (d) => makeDirs(d)),
    ).then(() => undefined);
    await this.ready;
    return this.batcher.submit(lockKey, item);
  }

  close(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
  }

  private lockOptions() {
    return {
      identity: this.options.identity,
      ttlMs: 30_000,
      timeoutMs: this.options.lockTimeoutMs ?? 10_000,
      now: this.now,
    };
  }

  private process(lockKey: string, items: Item[]): Promise<IntakeOutcome[]> {
    return withFileLock(path.join(this.paths.locks, hashName(lockKey)), this.lockOptions(), () =>
      lockKey.startsWith('incident:')
        ? this.processIncidents(items as Extract<Item, { kind: 'incident' }>[])
        : this.processAlerts(items.map((i) => (i as Extract<Item, { kind: 'alert' }>).alert)),
    );
  }

  private async processIncidents(items: Extract<Item, { kind: 'incident' }>[]): Promise<IntakeOutcome[]> {
    const outcomes: IntakeOutcome[] = [];
    let created = false;
    for (const { incident, key } of items) {
      const known = await readKey(this.paths, key);
      if (known) {
        await this.touch(key);
        outcomes.push({ status: 'duplicate', incidentId: known.incidentId, workspace: known.workspace });
        continue;
      }
      const name = folderName([incident.incidentId]);
      await createWorkspace(this.paths, name, { [INCIDENT_FILE]: `${JSON.stringify(incident, null, 2)}\n` });
      created = true;
      await createKey(this.paths, { key, workspace: name, incidentId: incident.incidentId });
      outcomes.push({ status: 'created', incidentId: incident.incidentId, workspace: name });
    }
    if (created) await Promise.all([fsyncDir(this.paths.root), fsyncDir(this.paths.keys)]);
    return outcomes;
  }

  private async processAlerts(alerts: MappedAlert[]): Promise<IntakeOutcome[]> {
    const now = this.now();
    const stormKeys = [...new Set(alerts.map((a) => a.stormKey))];
    const lookups = [
      ...new Set(
        alerts.flatMap((a) =>
          a.status === 'firing' ? [a.key] : [a.key, a.resolutionKey ?? `${a.key}:resolved`],
        ),
      ),
    ];
    const [storms, keys] = await Promise.all([
      Promise.all(stormKeys.map((k) => readStorm(this.paths, k))),
      Promise.all(lookups.map((k) => readKey(this.paths, k))),
    ]);
    const batch: Batch = {
      now,
      nowIso: new Date(now).toISOString(),
      storms: new Map(),
      changedStorms: new Set(),
      keys: new Map(lookups.map((k, i) => [k, keys[i]])),
      drafts: new Map(),
      docs: new Map(),
      changedDocs: new Set(),
      states: new Map(),
      newKeys: new Map(),
      aliases: new Map(),
      touched: new Set(),
      resolved: new Map(),
    };
    for (const stored of storms) {
      const live = stored.incidents.filter((i) => i.createdAt + this.options.windowMs > now);
      batch.storms.set(stored.key, { key: stored.key, incidents: live });
      if (live.length !== stored.incidents.length) batch.changedStorms.add(stored.key);
    }
    const outcomes: IntakeOutcome[] = [];
    try {
      for (const alert of alerts)
        outcomes.push(
          alert.status === 'firing' ? await this.fire(alert, batch) : await this.resolve(alert, batch),
        );
      await this.write(batch);
    } catch (err) {
      // The batch changed docs it may not have written: the next one reads them from disk.
      for (const workspace of [...batch.docs.keys(), ...batch.drafts.keys()])
        this.alertDocs.forget(path.join(this.paths.root, workspace));
      throw err;
    }
    for (const [workspace, at] of batch.resolved) {
      await this.options.hooks
        .resolved(path.join(this.paths.root, workspace), at)
        .catch((err: unknown) =>
          this.options.log?.error(
            { workspace, err: errorMessage(err) },
            'reporting a resolved incident failed',
          ),
        );
    }
    return outcomes;
  }

  /** A key known from this batch or from disk. */
  private async known(key: string, batch: Batch): Promise<KeyRecord | undefined> {
    return (
      batch.newKeys.get(key) ??
      batch.aliases.get(key) ??
      (batch.keys.has(key) ? batch.keys.get(key) : await readKey(this.paths, key))
    );
  }

  private async fire(alert: MappedAlert, batch: Batch): Promise<IntakeOutcome> {
    const seen = await this.known(alert.key, batch);
    if (seen) {
      batch.touched.add(alert.key);
      return { status: 'duplicate', incidentId: seen.incidentId, workspace: seen.workspace };
    }
    const storm = this.stormOf(alert.stormKey, batch);
    const { incidents } = storm;
    let target: StormIncident | undefined;
    for (let i = incidents.length - 1; i >= 0 && !target; i--) {
      const candidate = incidents[i];
      if (candidate?.groups.includes(alert.groupKey) && (await this.isOpen(candidate, batch)))
        target = candidate;
    }
    let joinedStorm = false;
    if (!target) {
      const open: StormIncident[] = [];
      for (const candidate of incidents) if (await this.isOpen(candidate, batch)) open.push(candidate);
      if (open.length >= this.options.stormLimit) {
        target = open[open.length - 1];
        joinedStorm = true;
        target?.groups.push(alert.groupKey);
        batch.changedStorms.add(storm.key);
      }
    }
    const record = target ? this.append(target, alert, batch) : this.draft(alert, batch);
    if (!record) return { status: 'duplicate', incidentId: target?.incidentId, workspace: target?.workspace };
    batch.newKeys.set(alert.key, record);
    if (alert.aliasKey) batch.aliases.set(alert.aliasKey, { ...record, key: alert.aliasKey });
    return {
      status: target ? 'joined' : 'created',
      incidentId: record.incidentId,
      workspace: record.workspace,
      ...(joinedStorm ? { storm: true as const } : {}),
    };
  }

  /**
   * Open for new alerts of its groups: its folder is still there and it has not resolved, unless its
   * investigation is running (then a new alert is recorded there). An incident whose run ended while
   * its alerts still fire keeps taking them: they are recorded, and do not start another run.
   */
  private async isOpen(incident: StormIncident, batch: Batch): Promise<boolean> {
    if (incident.closed) return false;
    if (batch.drafts.has(incident.workspace)) return true;
    const doc = await this.doc(incident.workspace, batch);
    if (doc && !doc.resolvedAt) return true;
    if (doc && (await this.stateOf(incident.workspace, batch)) === 'running') return true;
    incident.closed = true;
    for (const storm of batch.storms.values())
      if (storm.incidents.includes(incident)) batch.changedStorms.add(storm.key);
    return false;
  }

  private stormOf(key: string, batch: Batch): StormRecord {
    let storm = batch.storms.get(key);
    if (!storm) {
      storm = { key, incidents: [] };
      batch.storms.set(key, storm);
    }
    return storm;
  }

  private async stateOf(workspace: string, batch: Batch): Promise<IntakeState | undefined> {
    if (!batch.states.has(workspace))
      batch.states.set(
        workspace,
        await this.options.hooks.stateOf(path.join(this.paths.root, workspace)).catch(() => undefined),
      );
    return batch.states.get(workspace);
  }

  private async doc(workspace: string, batch: Batch): Promise<AlertsDoc | null> {
    const draft = batch.drafts.get(workspace);
    if (draft) return draft.doc;
    if (!batch.docs.has(workspace))
      batch.docs.set(workspace, this.alertDocs.read(path.join(this.paths.root, workspace)));
    return batch.docs.get(workspace) ?? null;
  }

  private entryOf(alert: MappedAlert, nowIso: string): AlertEntry {
    return {
      key: alert.key,
      ...(alert.aliasKey ? { alias: alert.aliasKey } : {}),
      receivedAt: nowIso,
      status: 'firing',
      source: alert.source,
      group: alert.group,
      alert: alert.original,
    };
  }

  /** Adds a firing alert to an open incident's alerts.json; undefined when it is already there. */
  private append(target: StormIncident, alert: MappedAlert, batch: Batch): KeyRecord | undefined {
    const doc = batch.drafts.get(target.workspace)?.doc ?? batch.docs.get(target.workspace);
    if (!doc) return undefined;
    // Its delivery key may be lost (a crash before the key was written): the file still knows it.
    if (doc.alerts.some((a) => a.key === alert.key)) return undefined;
    if (doc.alerts.length < this.options.maxAlertsPerIncident)
      doc.alerts.push(this.entryOf(alert, batch.nowIso));
    else doc.omitted++;
    // A storm joins other workloads' alerts here: each is named, not only incident.json's.
    countWorkload((doc.workloads ??= []), alert.fields.workload, this.options.maxAlertsPerIncident);
    doc.count++;
    doc.open++;
    doc.lastAt = batch.nowIso;
    if (!batch.drafts.has(target.workspace)) batch.changedDocs.add(target.workspace);
    return { key: alert.key, workspace: target.workspace, incidentId: target.incidentId };
  }

  /** A new incident for the alert's group. */
  private draft(alert: MappedAlert, batch: Batch): KeyRecord {
    const { fields } = alert;
    const name = folderName([
      compactStamp(batch.now),
      fields.alertname,
      fields.namespace,
      fields.workload.kind === 'Namespace' ? '' : fields.workload.name,
    ]);
    const incident = incidentFromAlert(alert, name, batch.nowIso);
    const workloads: IncidentWorkload[] = [];
    countWorkload(workloads, fields.workload, this.options.maxAlertsPerIncident);
    const doc: AlertsDoc = {
      version: 1,
      firstAt: batch.nowIso,
      lastAt: batch.nowIso,
      count: 1,
      omitted: 0,
      open: 1,
      workloads,
      alerts: [this.entryOf(alert, batch.nowIso)],
    };
    batch.drafts.set(name, { name, incidentId: name, incident, doc });
    this.stormOf(alert.stormKey, batch).incidents.push({
      workspace: name,
      incidentId: name,
      createdAt: batch.now,
      groups: [alert.groupKey],
    });
    batch.changedStorms.add(alert.stormKey);
    return { key: alert.key, workspace: name, incidentId: name };
  }

  private async resolve(alert: MappedAlert, batch: Batch): Promise<IntakeOutcome> {
    const resolutionKey = alert.resolutionKey ?? `${alert.key}:resolved`;
    const done = await this.known(resolutionKey, batch);
    if (done) {
      batch.touched.add(resolutionKey);
      return {
        status: 'resolved',
        incidentId: done.incidentId,
        workspace: done.workspace,
        reason: 'already recorded',
      };
    }
    const record = await this.known(alert.key, batch);
    const doc = record ? await this.doc(record.workspace, batch) : null;
    if (!record || !doc)
      return {
        status: 'ignored',
        reason: record
          ? `${record.workspace}/${ALERTS_FILE} of this alert's incident is gone or not an alerts document; the resolution is not recorded`
          : 'no incident holds this alert (never received firing, or forgotten after intake.webhooks.idempotency_ttl)',
      };
    const at = alert.endsAt && !Number.isNaN(Date.parse(alert.endsAt)) ? alert.endsAt : batch.nowIso;
    let marked = 0;
    // The only change to a stored entry: alerts-file.ts makes an entry's text again when these differ.
    for (const entry of doc.alerts) {
      if ((entry.key === alert.key || entry.alias === alert.key) && entry.status === 'firing') {
        entry.status = 'resolved';
        entry.resolvedAt = at;
        marked++;
      }
    }
    // An alert over max_alerts_per_incident was counted, not stored: it still closes one open alert.
    const storedOpen = doc.alerts.filter((a) => a.status === 'firing').length;
    if (marked === 0 && doc.open > storedOpen) marked = 1;
    doc.open = Math.max(0, doc.open - marked);
    doc.lastAt = batch.nowIso;
    if (!batch.drafts.has(record.workspace)) batch.changedDocs.add(record.workspace);
    if (doc.open === 0 && !doc.resolvedAt) {
      doc.resolvedAt = at;
      batch.resolved.set(record.workspace, at);
      const storm = this.stormOf(alert.stormKey, batch);
      const incident = storm.incidents.find((i) => i.workspace === record.workspace);
      if (incident && (await this.stateOf(record.workspace, batch)) !== 'running') {
        incident.closed = true;
        batch.changedStorms.add(storm.key);
      }
    }
    batch.newKeys.set(resolutionKey, { ...record, key: resolutionKey });
    return { status: 'resolved', incidentId: record.incidentId, workspace: record.workspace };
  }

  /**
   * Storm record first (a crash after it leaves a record naming a folder that is not there: the next
   * alert finds it gone and opens a new one), then the workspaces and alerts.json, then the keys (a
   * crash before them: a redelivery is found in alerts.json instead).
   */
  private async write(batch: Batch): Promise<void> {
    const root = this.paths.root;
    // Each stage waits for all its writes even when one fails (allEnded): a failed batch must not let
    // the next one in while its writes still run (an alerts.json of the failed batch renamed into place
    // after the next batch's would undo the next batch's alerts).
    await allEnded([...batch.changedStorms].map((k) => writeStorm(this.paths, this.stormOf(k, batch))));
    if (batch.changedStorms.size > 0) await fsyncDir(this.paths.storms);
    await allEnded([
      ...[...batch.drafts.values()].map(async (draft) => {
        const dir = await createWorkspace(this.paths, draft.name, {
          [INCIDENT_FILE]: `${JSON.stringify(draft.incident, null, 2)}\n`,
          [ALERTS_FILE]: alertsDocText(draft.doc),
        });
        this.alertDocs.wrote(dir, draft.doc);
      }),
      ...[...batch.changedDocs].map(async (workspace) => {
        const doc = batch.docs.get(workspace);
        const dir = path.join(root, workspace);
        if (doc && (await writeAlerts(dir, alertsDocChunks(doc)))) this.alertDocs.wrote(dir, doc);
        else this.alertDocs.forget(dir);
      }),
    ]);
    await allEnded([
      ...[...batch.newKeys.values()].map((record) => createKey(this.paths, record)),
      ...[...batch.aliases.values()].map((record) => replaceKey(this.paths, record)),
      ...[...batch.touched].map((key) => this.touch(key)),
      batch.drafts.size > 0 ? fsyncDir(root) : undefined,
    ]);
    if (batch.newKeys.size > 0 || batch.aliases.size > 0) await fsyncDir(this.paths.keys);
  }

  /** A key seen again lives another idempotency_ttl. */
  private async touch(key: string): Promise<void> {
    const t = new Date(this.now());
    try {
      utimesSync(path.join(this.paths.keys, hashName(key)), t, t);
    } catch {
      // expired and removed meanwhile: the key is simply gone
    }
  }

  /** Removes keys not seen for idempotency_ttl, storm records past the window, abandoned temp folders. */
  async sweep(): Promise<{ keys: number; storms: number; tmp: number }> {
    const now = this.now();
    const removed = { keys: 0, storms: 0, tmp: 0 };
    const expire = async (dir: string, maxAgeMs: number, remove: (file: string) => Promise<void>) => {
      let count = 0;
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        const file = path.join(dir, name);
        const info = await stat(file).catch(() => undefined);
        if (info && now - info.mtimeMs > maxAgeMs) {
          await remove(file).catch(() => undefined);
          count++;
        }
      }
      return count;
    };
    removed.keys = await expire(this.paths.keys, this.options.idempotencyTtlMs, (f) => unlink(f));
    // A storm record is rewritten with every alert of its key: untouched for twice the window, it
    // holds nothing live.
    removed.storms = await expire(this.paths.storms, 2 * this.options.windowMs + 60_000, (f) => unlink(f));
    removed.tmp = await expire(this.paths.tmp, STALE_TMP_MS, (f) => rm(f, { recursive: true, force: true }));
    return removed;
  }
}
