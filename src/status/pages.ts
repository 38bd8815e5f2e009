import type { IncidentState } from '../workspace/state.js';

// Listing order and pagination: newest `updatedAt` first, then folder name, so that a page boundary
// stays put while incidents change. A cursor names the last incident of a page (its time and folder).

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 10_000;

export interface Sortable {
  folder: string;
  /** `updatedAt` in epoch ms. */
  sortKey: number;
  state: IncidentState;
  /** The incident's cluster (the registry's name for it), when its incident.json names one. */
  cluster?: string | undefined;
}

export const compareEntries = (a: Omit<Sortable, 'state'>, b: Omit<Sortable, 'state'>): number =>
  b.sortKey - a.sortKey || (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : 0);

export const sortKeyOf = (updatedAt: string): number => {
  const ms = Date.parse(updatedAt);
  return Number.isFinite(ms) ? ms : 0;
};

export class PageQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PageQueryError';
  }
}

export function encodeCursor(entry: Omit<Sortable, 'state'>): string {
  return Buffer.from(JSON.stringify([entry.sortKey, entry.folder])).toString('base64url');
}

export function decodeCursor(cursor: string): Omit<Sortable, 'state'> {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'string')
      return { sortKey: value[0], folder: value[1] };
  } catch {
    // reported below
  }
  throw new PageQueryError(
    `cursor ${JSON.stringify(cursor.slice(0, 80))} is not one this server gave: pass the nextCursor of the previous page, or leave it out to start at the newest`,
  );
}

/** First index in `sorted` that comes after `key` (binary search). */
function after<T extends Omit<Sortable, 'state'>>(
  sorted: readonly T[],
  key: Omit<Sortable, 'state'>,
): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareEntries(sorted[mid] as T, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface PageRequest {
  state?: IncidentState;
  /** Only incidents of this cluster (compared with `Sortable.cluster`). */
  cluster?: string;
  limit?: number;
  cursor?: string;
  offset?: number;
}

/** Whether an entry passes the request's filters (state, cluster). */
const matcher =
  (request: Pick<PageRequest, 'state' | 'cluster'>) =>
  (e: Sortable): boolean =>
    (request.state === undefined || e.state === request.state) &&
    (request.cluster === undefined || e.cluster === request.cluster);

/** How many of `entries` pass the request's filters. */
export function matchCount(
  entries: Iterable<Sortable>,
  request: Pick<PageRequest, 'state' | 'cluster'>,
): number {
  const matches = matcher(request);
  let n = 0;
  for (const e of entries) if (matches(e)) n++;
  return n;
}

/** One page of `sorted` (already in listing order) matching the filters (state, cluster). */
export function pageOf<T extends Sortable>(
  sorted: readonly T[],
  request: PageRequest,
): { items: T[]; nextCursor?: string } {
  const limit = request.limit ?? DEFAULT_LIMIT;
  const matches = matcher(request);
  let i = request.cursor !== undefined ? after(sorted, decodeCursor(request.cursor)) : 0;
  if (request.cursor === undefined)
    for (let skip = request.offset ?? 0; skip > 0 && i < sorted.length; i++)
      if (matches(sorted[i] as T)) skip--;
  const items: T[] = [];
  for (; i < sorted.length && items.length < limit; i++)
    if (matches(sorted[i] as T)) items.push(sorted[i] as T);
  for (; i < sorted.length; i++)
    if (matches(sorted[i] as T)) {
      const last = items.at(-1);
      return last ? { items, nextCursor: encodeCursor(last) } : { items };
    }
  return { items };
}
