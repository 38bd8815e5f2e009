import { parseTables } from './get-table.js';
import type { EventFacts } from './types.js';

// Events as `kubectl get events` and `kubectl events` print them: LAST SEEN, TYPE, REASON, OBJECT,
// MESSAGE (and with -o wide SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME).

export function parseEventTable(text: string): EventFacts[] {
  return parseTables(text)
    .filter((t) => t.columns.includes('REASON') && t.columns.includes('MESSAGE'))
    .flatMap((t) =>
      t.rows.map((row) => ({
        ...(row.OBJECT ? { object: row.OBJECT } : {}),
        ...(row.TYPE ? { type: row.TYPE } : {}),
        reason: row.REASON ?? '',
        message: row.MESSAGE ?? '',
      })),
    );
}
