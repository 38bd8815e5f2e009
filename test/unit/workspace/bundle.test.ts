import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedactingLog, RunBundle, scrubFile } from '../../../src/workspace/bundle.js';
import { RUN_FILES } from '../../../src/workspace/layout.js';
import { listFiles, scanForSecrets } from '../../support/secret-scan.js';
import { Redactor } from '../../../src/log/redact.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'bundle-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SECRET = 'plain-value-of-the-key-42';
const redactor = () => new Redactor({ ANTHROPIC_API_KEY: SECRET });

describe('RedactingLog', () => {
  it('redacts a secret split across two chunks', async () => {
    const log = new RedactingLog(path.join(dir, 'out.log'), redactor(), 1 << 20);
    log.write('key is plain-value-');
    log.write(Buffer.from('of-the-key-42 ok\nnext'));
    await log.close();
    expect(await readFile(path.join(dir, 'out.log'), 'utf8')).toBe(
      'key is [REDACTED:ANTHROPIC_API_KEY] ok\nnext',
    );
    expect(log.received).toBe(Buffer.byteLength('key is plain-value-of-the-key-42 ok\nnext'));
  });

  it('keeps a multi-byte character split across two chunks intact', async () => {
    const log = new RedactingLog(path.join(dir, 'out.log'), redactor(), 1 << 20);
    const bytes = Buffer.from('pod → crashed\n');
    log.write(bytes.subarray(0, 5));
    log.write(bytes.subarray(5));
    await log.close();
    expect(await readFile(path.join(dir, 'out.log'), 'utf8')).toBe('pod → crashed\n');
  });

  it('redacts a token inside a very long line flushed before its newline', async () => {
    const log = new RedactingLog(path.join(dir, 'out.log'), new Redactor(), 1 << 22);
    const token = 'sk-ant-api03-AbCdEf0123456789_xyz-QRSTUVWXYZ';
    log.write(`${'x '.repeat(40_000)}${token.slice(0, 10)}`);
    log.write(`${token.slice(10)} ${'y'.repeat(70_000)}`);
    await log.close();
    const text = await readFile(path.join(dir, 'out.log'), 'utf8');
    expect(text).not.toContain('AbCdEf0123456789');
    expect(text).toContain('[REDACTED]');
  });

  it('redacts a secret split across two chunks of a long minified-JSON line with no whitespace', async () => {
    const log = new RedactingLog(path.join(dir, 'out.log'), redactor(), 1 << 22);
    log.write(`{"text":"${'x'.repeat(70_000)}","key":"${SECRET.slice(0, 9)}`);
    log.write(`${SECRET.slice(9)}","more":"${'y'.repeat(70_000)}"}\n`);
    await log.close();
    const text = await readFile(path.join(dir, 'out.log'), 'utf8');
    expect(text).not.toContain(SECRET.slice(0, 9));
    expect(text).toContain('"key":"[REDACTED:ANTHROPIC_API_KEY]"');
    expect(text).toHaveLength(Buffer.byteLength(text));
  });

  it('stops writing at the cap and says so, while counting every byte received', async () => {
    const log = new RedactingLog(path.join(dir, 'out.log'), redactor(), 100);
    for (let i = 0; i < 10; i++) log.write(`${'a'.repeat(49)}\n`);
    await log.close();
    const text = await readFile(path.join(dir, 'out.log'), 'utf8');
    expect(text.startsWith('a'.repeat(49))).toBe(true);
    expect(text).toContain('[triage-runner: output truncated at 100 bytes]');
    expect(log.truncated).toBe(true);
    expect(log.received).toBe(500);
  });

  it('records a write error and still closes', async () => {
    const log = new RedactingLog(path.join(dir, 'missing-folder', 'out.log'), redactor(), 100);
    log.write('hello\n');
    await log.close();
    expect(log.error).toBeInstanceOf(Error);
    await log.close();
  });
});

describe('RunBundle', () => {
  it('writes text and JSON through the redactor into .triage/runs/<id>/', async () => {
    const bundle = await RunBundle.create(dir, 'run-1', redactor());
    await bundle.writeText(RUN_FILES.promptSent, `system with ${SECRET}`);
    await bundle.writeJson(RUN_FILES.invocation, { env: { ANTHROPIC_API_KEY: SECRET } });
    expect(bundle.dir).toBe(path.join(dir, '.triage', 'runs', 'run-1'));
    expect(await scanForSecrets(dir, { ANTHROPIC_API_KEY: SECRET })).toEqual([]);
    expect(await readFile(bundle.path(RUN_FILES.invocation), 'utf8')).toContain(
      '[REDACTED:ANTHROPIC_API_KEY]',
    );
  });
});

describe('scanForSecrets', () => {
  it('finds raw, JSON-escaped and base64 occurrences in nested and dot files, naming file, secret and line', async () => {
    await mkdir(path.join(dir, '.triage', 'runs', 'r1'), { recursive: true });
    await writeFile(path.join(dir, '.triage', 'runs', 'r1', 'agent-stdout.log'), `one\ntwo ${SECRET}\n`);
    await writeFile(path.join(dir, '.hidden'), JSON.stringify({ v: 'quote"secret-99' }));
    await writeFile(path.join(dir, 'b64.txt'), Buffer.from(SECRET).toString('base64'));
    await writeFile(path.join(dir, 'clean.txt'), 'nothing here');
    await symlink('/etc/hostname', path.join(dir, 'link'));
    const findings = await scanForSecrets(dir, { ANTHROPIC_API_KEY: SECRET, OTHER: 'quote"secret-99' });
    expect(findings).toEqual([
      { file: '.hidden', secret: 'OTHER', line: 1, form: 'json' },
      {
        file: path.join('.triage', 'runs', 'r1', 'agent-stdout.log'),
        secret: 'ANTHROPIC_API_KEY',
        line: 2,
        form: 'raw',
      },
      { file: 'b64.txt', secret: 'ANTHROPIC_API_KEY', line: 1, form: 'base64' },
    ]);
    expect((await listFiles(dir)).map((f) => path.basename(f))).not.toContain('link');
  });

  it('finds a secret base64-encoded inside a larger blob, at any byte alignment', async () => {
    for (const prefix of ['', 'a', 'ab']) {
      const sub = path.join(dir, `align-${prefix.length}`);
      await mkdir(sub);
      const blob = Buffer.from(`{"auths":{"r":{"auth":"${prefix}${SECRET}"}}}`).toString('base64');
      await writeFile(path.join(sub, 'dockerconfig.json'), `{"data":"${blob}"}\n`);
      expect(await scanForSecrets(sub, { ANTHROPIC_API_KEY: SECRET })).toEqual([
        { file: 'dockerconfig.json', secret: 'ANTHROPIC_API_KEY', line: 1, form: 'base64' },
      ]);
    }
  });

  it('finds nothing in a folder that does not exist', async () => {
    expect(await scanForSecrets(path.join(dir, 'nope'), { A: SECRET })).toEqual([]);
  });
});

describe('scrubFile', () => {
  it('rewrites a report holding a secret and leaves a clean or missing file alone', async () => {
    const file = path.join(dir, 'investigation.md');
    await writeFile(file, `# Root Cause\nkey ${SECRET} leaked\n`);
    expect(await scrubFile(file, redactor())).toBe(true);
    expect(await readFile(file, 'utf8')).toBe('# Root Cause\nkey [REDACTED:ANTHROPIC_API_KEY] leaked\n');
    expect(await scrubFile(file, redactor())).toBe(false);
    expect(await scrubFile(path.join(dir, 'missing.md'), redactor())).toBe(false);
  });

  it('exposes the run redaction on the bundle for text sent to the agent', async () => {
    const bundle = await RunBundle.create(dir, 'run-2', redactor());
    expect(bundle.redact(`incident mentions ${SECRET}`)).toBe(
      'incident mentions [REDACTED:ANTHROPIC_API_KEY]',
    );
  });
});
