// What a run holds is released whatever stage it stopped at: latest first, and one failing release
// does not keep the others from running.
import { describe, expect, it, vi } from 'vitest';
import { RunCleanup } from '../../../src/run/cleanup.js';
import type { Logger } from '../../../src/log/logger.js';

const logger = () => {
  const error = vi.fn();
  return { log: { error } as unknown as Logger, error };
};

describe('RunCleanup', () => {
  it('releases in reverse order of acquisition', async () => {
    const order: string[] = [];
    const cleanup = new RunCleanup(logger().log);
    cleanup.defer('skills snapshot', () => void order.push('snapshot'));
    cleanup.defer('kubectl broker', async () => void order.push('broker'));
    cleanup.defer('agent run', async () => void order.push('container'));
    await cleanup.run();
    expect(order).toEqual(['container', 'broker', 'snapshot']);
  });

  it('goes on after a release that throws, and logs which one failed', async () => {
    const { log, error } = logger();
    const released: string[] = [];
    const cleanup = new RunCleanup(log);
    cleanup.defer('skills snapshot', () => void released.push('snapshot'));
    cleanup.defer('kubectl broker', () => Promise.reject(new Error('socket gone')));
    await cleanup.run();
    expect(released).toEqual(['snapshot']);
    expect(error).toHaveBeenCalledWith(
      { err: 'socket gone', what: 'kubectl broker' },
      'could not release what the run held',
    );
  });

  it('releases each thing once, however often it is run', async () => {
    const release = vi.fn();
    const cleanup = new RunCleanup(logger().log);
    cleanup.defer('per-run HOME', release);
    await cleanup.run();
    await cleanup.run();
    expect(release).toHaveBeenCalledOnce();
  });
});
