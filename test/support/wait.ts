// The one wait of the tests: vi.waitFor with a deadline, until a check gives a value (anything but
// undefined or false); a timeout names what was awaited, for how long, and the last error seen.

export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
  intervalMs = 20,
  detail: () => string = () => '',
): Promise<T> {
  // Loaded on first use: child processes that import the test support (test/support/notify-child.ts)
  // run outside vitest, where importing it throws.
  const { vi } = await import('vitest');
  try {
    return await vi.waitFor(
      async () => {
        const value = await check();
        if (value === undefined || value === false) throw new Error(`not yet: ${what}`);
        return value;
      },
      { timeout: timeoutMs, interval: intervalMs },
    );
  } catch (err) {
    const last =
      err instanceof Error && !err.message.startsWith('not yet: ') ? ` (last error: ${err.message})` : '';
    const more = detail();
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}${more ? `. ${more}` : ''}`);
  }
}
