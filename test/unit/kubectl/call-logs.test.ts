import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCallLog } from '../../../src/kubectl/broker/calls.js';
import { guardCall } from '../../support/cluster-calls.js';
import { readOutputLog, type CallOutputRecord } from '../../../src/kubectl/broker/outputs.js';

// cluster-calls.jsonl and cluster-outputs.jsonl read back (the evidence check, the result, an adopting
// daemon): lines without what those readers use are counted unreadable or skipped, never a TypeError
// that drops the whole evidence verdict.

const call = guardCall();
const output: CallOutputRecord = {
  call: 1,
  by: 'guard',
  normalized: 'get pods',
  exitCode: 0,
  stdout: 'NAME READY\n',
  stderr: '',
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'triage-call-logs-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const jsonl = (values: unknown[]) => `${values.map((v) => JSON.stringify(v)).join('\n')}\n`;

describe('the broker logs read back', () => {
  it('counts a call line without its argv, who decided or a whole exit code as unreadable', async () => {
    const file = path.join(dir, 'cluster-calls.jsonl');
    const damaged = [
      { ...call, argv: undefined },
      { ...call, argv: [1] },
      { ...call, by: undefined },
      { ...call, exitCode: '0' },
      null,
    ];
    await writeFile(file, jsonl([call, ...damaged, { ...call, exitCode: null }]));
    const read = await readCallLog(file);
    expect(read.records).toEqual([call, { ...call, exitCode: null }]);
    expect(read.unreadable).toBe(damaged.length);
  });

  it('skips an output line without its stderr, command or a whole call number', async () => {
    const file = path.join(dir, 'cluster-outputs.jsonl');
    await writeFile(
      file,
      jsonl([
        output,
        { ...output, stderr: undefined },
        { ...output, normalized: 3 },
        { ...output, call: 1.5 },
        { ...output, exitCode: 'x' },
        null,
        { ...output, call: 2 },
      ]),
    );
    expect(await readOutputLog(file)).toEqual([output, { ...output, call: 2 }]);
  });
});
