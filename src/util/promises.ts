/**
 * Waits until every one of `promises` has ended, then throws the first failure (in their order). Unlike
 * Promise.all, a failure does not end the wait while the others still run: what the caller does next
 * (clean up, let the next batch in) never runs beside them.
 */
export async function allEnded(promises: readonly (Promise<unknown> | undefined)[]): Promise<void> {
  for (const result of await Promise.allSettled(promises))
    if (result.status === 'rejected') throw result.reason;
}
