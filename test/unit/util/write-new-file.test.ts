import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeNewFileSynced } from '../../../src/util/fs.js';
import { tempRoot } from '../../support/incidents.js';

// writeNewFileSynced with its data as chunks: written in order, more chunks than one writev takes.

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-write-new-'));
});
afterEach(async () => cleanup());

describe('writeNewFileSynced', () => {
  it('writes chunks in order, empty ones included, across more than one writev (2,500 chunks)', async () => {
    const chunks = Array.from({ length: 2500 }, (_, i) => Buffer.from(i % 7 === 0 ? '' : `chunk ${i} ü\n`));
    const file = path.join(root, 'chunks.txt');
    await writeNewFileSynced(file, chunks);
    expect(await readFile(file)).toEqual(Buffer.concat(chunks));
  });

  it('refuses a file that exists, whatever the data', async () => {
    const file = path.join(root, 'once.txt');
    await writeNewFileSynced(file, 'first');
    await expect(writeNewFileSynced(file, [Buffer.from('second')])).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(file, 'utf8')).toBe('first');
  });
});
