import { mkdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * The baseline the burst benchmarks compare with: `n` jobs, each in its own folder `<root>/b<i>`
 * (created before the clock starts), run `concurrency` at a time. Resolves to the elapsed ms.
 */
export async function timePool(
  root: string,
  n: number,
  concurrency: number,
  job: (i: number, dir: string) => Promise<void>,
): Promise<number> {
  const dirs = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const dir = path.join(root, `b${i}`);
      await mkdir(dir, { recursive: true });
      return dir;
    }),
  );
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) await job(i, dirs[i] as string);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - t0;
}
