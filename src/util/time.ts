// The one compact UTC timestamp: for run ids, output folders and idempotency keys.

/** `20260301T100200Z`: UTC to the second, sortable, safe in file names. */
export const compactStamp = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
