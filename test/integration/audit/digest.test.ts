import { createHash } from 'node:crypto';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileDigest, folderDigests } from '../../../src/audit/digest.js';
import { scratchDir } from '../../support/scratch.js';

// The digests a run's `finished` event records: small files are read whole, large ones streamed, and
// both give the file's sha256; a bundle's files are digested several at a time and listed in order.

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

describe('run bundle digests', () => {
  it("gives a file's sha256 whether it is read whole or streamed, and never follows a symlink", async () => {
    const dir = scratchDir('triage-digest-');
    const small = 'a small record\n';
    // Past the whole-read size (1 MiB): streamed in chunks.
    const large = Buffer.alloc(3 * 1024 * 1024 + 17, 'x');
    large.write('start', 0);
    large.write('end', large.length - 3);
    await writeFile(path.join(dir, 'small.json'), small);
    await writeFile(path.join(dir, 'large.log'), large);
    await writeFile(path.join(dir, 'empty'), '');
    await symlink(path.join(dir, 'small.json'), path.join(dir, 'link'));
    expect(await fileDigest(path.join(dir, 'small.json'))).toBe(sha256(small));
    expect(await fileDigest(path.join(dir, 'large.log'))).toBe(sha256(large));
    expect(await fileDigest(path.join(dir, 'empty'))).toBe(sha256(''));
    expect(await fileDigest(path.join(dir, 'link'))).toBe('symlink');
  });

  it('lists every file of a bundle in sorted walk order, transient files left out', async () => {
    const dir = scratchDir('triage-digest-folder-');
    await mkdir(path.join(dir, 'kubectl-guard', 'outputs'), { recursive: true });
    const files: Record<string, string> = {};
    // More files than are digested at once.
    for (let i = 19; i >= 0; i--)
      files[`kubectl-guard/outputs/${String(i).padStart(2, '0')}.txt`] = `call ${i}\n`;
    files['context.json'] = '{}\n';
    files['zz-last.md'] = '# report\n';
    for (const [rel, text] of Object.entries(files)) await writeFile(path.join(dir, rel), text);
    await writeFile(path.join(dir, 'agent.pid'), '123');
    const digests = await folderDigests(dir);
    expect(Object.keys(digests)).toEqual([
      'context.json',
      ...Array.from({ length: 20 }, (_, i) => `kubectl-guard/outputs/${String(i).padStart(2, '0')}.txt`),
      'zz-last.md',
    ]);
    for (const [rel, text] of Object.entries(files)) expect(digests[rel], rel).toBe(sha256(text));
  });
});
