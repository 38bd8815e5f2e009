import type { KubectlCommand } from '../../kubectl/parse.js';
import { parseDescribePods } from './describe-pod.js';
import { parseEventTable } from './events.js';
import { bareName, parseTables } from './get-table.js';
import { EMPTY_OUTPUT, type ParsedOutput, type PodFacts } from './types.js';
import { parseObjects } from './yaml-json.js';

// One recorded output read into fields by what the call was: `describe pod(s)`, `get pods` as a table,
// `get events` / `kubectl events`, and `-o yaml|json` of any of them. Logs and other outputs have no
// fields: their lines are what a quote is matched against.

export type { ContainerFacts, EventFacts, ParsedOutput, PodFacts } from './types.js';

const isPods = (command: KubectlCommand): boolean =>
  command.targets.some((t) => t.type?.name === 'pods' || /^po(?:d|ds)?$/.test(t.text));
const isEvents = (command: KubectlCommand): boolean =>
  command.verb === 'events' || command.targets.some((t) => t.type?.name === 'events' || t.text === 'ev');

function podsOfTable(text: string): PodFacts[] {
  return parseTables(text)
    .filter((t) => t.columns.includes('NAME') && t.columns.includes('STATUS'))
    .flatMap((t) =>
      t.rows.map((row) => {
        const restarts = /^\d+/.exec(row.RESTARTS ?? '')?.[0];
        return {
          name: bareName(row.NAME ?? ''),
          ...(row.NAMESPACE ? { namespace: row.NAMESPACE } : {}),
          ...(row.STATUS ? { status: row.STATUS } : {}),
          ...(row.READY ? { ready: row.READY } : {}),
          ...(restarts !== undefined ? { restarts: Number(restarts) } : {}),
          containers: [],
        };
      }),
    );
}

/** The fields of `stdout` as `command` printed it. */
export function parseOutput(command: KubectlCommand, stdout: string): ParsedOutput {
  if (!stdout.trim()) return EMPTY_OUTPUT;
  const output = command.output ?? '';
  if (output === 'yaml' || output === 'json') return parseObjects(stdout);
  if (command.verb === 'describe' && isPods(command)) {
    const described = parseDescribePods(stdout);
    return {
      pods: described.map(({ events: _events, ...pod }) => pod),
      events: described.flatMap((d) => d.events),
    };
  }
  if (output !== '' && output !== 'wide') return EMPTY_OUTPUT;
  if (isEvents(command)) return { pods: [], events: parseEventTable(stdout) };
  if (command.verb === 'get' && isPods(command)) return { pods: podsOfTable(stdout), events: [] };
  return EMPTY_OUTPUT;
}
