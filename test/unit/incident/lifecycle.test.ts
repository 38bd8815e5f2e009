// The lifecycle's one table (src/incident/lifecycle.ts), checked as a table: every state answers every
// event with an arrow the machine follows or a refusal; every state is reachable and none is a dead
// end; a guard refuses exactly the arrows it is on; docs/architecture.md shows the same table.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  IllegalTransitionError,
  LIFECYCLE,
  targets,
  type Arrow,
  type EventType,
  type From,
  type RunEnding,
} from '../../../src/incident/lifecycle.js';
import { transition, type IncidentEvent } from '../../../src/incident/machine.js';
import { runEnding } from '../../../src/incident/run-end.js';
import { INCIDENT_STATES, type IncidentState, type StateFile } from '../../../src/workspace/state.js';
import { MACHINE_CTX, SAMPLE_EVENTS, stateRecord } from '../../support/incident-machine.js';

const ctx = MACHINE_CTX;

const record = stateRecord;

const EVENTS = SAMPLE_EVENTS;

/** A run's `Finished` outcome for each way the machine judges a run's end (on a record at attempt 1 of 3). */
const ENDINGS: Record<RunEnding, IncidentEvent & { type: 'Finished' }> = {
  answered: { type: 'Finished', runId: 'r1', outcome: { status: 'succeeded', exitCode: 0 } },
  interrupted: { type: 'Finished', runId: 'r1', outcome: { status: 'interrupted' } },
  waiting: {
    type: 'Finished',
    runId: 'r1',
    outcome: { status: 'failed', transient: true, waitFor: 'the container engine' },
  },
  retrying: { type: 'Finished', runId: 'r1', outcome: { status: 'failed', transient: true } },
  failed: { type: 'Finished', runId: 'r1', outcome: { status: 'timed_out' } },
};

const FROM: readonly From[] = ['new', ...INCIDENT_STATES];
const EVENT_TYPES = Object.keys(EVENTS) as EventType[];
const at = (from: From): StateFile | undefined => (from === 'new' ? undefined : record(from));

describe('the lifecycle table: every state answers every event', () => {
  for (const from of FROM)
    for (const type of EVENT_TYPES) {
      const arrow = LIFECYCLE[from][type];
      it(`${from} + ${type}: ${arrow ? `→ ${targets(arrow).join(' | ')}` : 'refused'}`, () => {
        if (!arrow) {
          let thrown: unknown;
          try {
            transition(at(from), EVENTS[type], ctx);
          } catch (err) {
            thrown = err;
          }
          expect(thrown).toBeInstanceOf(IllegalTransitionError);
          expect((thrown as IllegalTransitionError).message).toContain(
            `allowed there: ${Object.keys(LIFECYCLE[from]).join(', ') || 'nothing'}`,
          );
          return;
        }
        if (typeof arrow.to === 'string') {
          expect(transition(at(from), EVENTS[type], ctx).record.state).toBe(arrow.to);
          return;
        }
        for (const [ending, event] of Object.entries(ENDINGS) as [RunEnding, IncidentEvent][]) {
          expect(transition(at(from), event, ctx).record.state).toBe(arrow.to[ending]);
        }
      });
    }

  it('the sample outcomes are judged as the endings they stand for', () => {
    for (const [ending, event] of Object.entries(ENDINGS))
      expect(runEnding(event.outcome, record('running'), ctx.policy)).toBe(ending);
  });
});

/** The states reachable from `from` through the table's arrows. */
function reachable(from: From): Set<IncidentState> {
  const seen = new Set<IncidentState>();
  const walk = (state: From) => {
    for (const arrow of Object.values(LIFECYCLE[state]))
      for (const to of targets(arrow))
        if (!seen.has(to)) {
          seen.add(to);
          walk(to);
        }
  };
  walk(from);
  return seen;
}

describe('the lifecycle as a graph', () => {
  it('every state is reachable from a new incident', () => {
    expect([...reachable('new')].sort()).toEqual([...INCIDENT_STATES].sort());
  });

  it('no state is a dead end: from each, some path leads back to queued, so the incident can run again', () => {
    for (const state of INCIDENT_STATES)
      expect({ state, queued: reachable(state).has('queued') }).toEqual({
        state,
        queued: true,
      });
  });
});

describe('guards refuse exactly the arrows they are on', () => {
  const unstopped = (state: IncidentState) => record(state, { unstopped: true });

  for (const from of INCIDENT_STATES)
    for (const [type, arrow] of Object.entries(LIFECYCLE[from]) as [EventType, Arrow][]) {
      const guarded = (arrow.guards ?? []).length > 0;
      it(`${from} + ${type} for a run that ignored its stop: ${guarded ? 'refused by its guard' : 'follows the arrow'}`, () => {
        const refused = arrow.guards?.map((g) => g(unstopped(from))).find(Boolean);
        if (!guarded) {
          expect(() => transition(unstopped(from), EVENTS[type], ctx)).not.toThrow();
          return;
        }
        expect(refused).toEqual(expect.stringContaining('may still be running'));
        expect(() => transition(unstopped(from), EVENTS[type], ctx)).toThrow(
          new IllegalTransitionError(from, type, refused),
        );
        expect(() => transition(record(from), EVENTS[type], ctx)).not.toThrow();
      });
    }
});

/** The table as docs/architecture.md shows it: a line per state, its arrows `Event → to`. */
function renderTable(): string {
  const arrow = (type: string, a: Arrow) => {
    const to =
      typeof a.to === 'string'
        ? a.to
        : Object.entries(a.to)
            .map(([ending, state]) => `${ending}: ${state}`)
            .join(', ');
    const guards = (a.guards ?? []).map((g) => ` if \`${g.name}\``).join('');
    return `${type} → ${to}${guards}`;
  };
  const rows = FROM.map(
    (from) =>
      `| ${from} | ${Object.entries(LIFECYCLE[from])
        .map(([type, a]) => arrow(type, a))
        .join('; ')} |`,
  );
  return ['| from | event → to |', '|---|---|', ...rows].join('\n');
}

describe('docs/architecture.md shows the table', () => {
  it('its lifecycle section holds the table as the code has it (rendered here; paste it from the diff when it changes)', () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../../docs/architecture.md'), 'utf8');
    const section = doc.split(/^## /m).find((s) => s.startsWith('The incident lifecycle')) ?? '';
    const table = section
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .join('\n');
    expect(table).toBe(renderTable());
  });
});
