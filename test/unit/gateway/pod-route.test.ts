// The shell in front of an agent pod's CLI: the run token moves out of the secret environment (so no
// engine puts it, or a reference to the real key, in the Job) and is exported from its file instead.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { launchWithPodToken, POD_TOKEN_ENV } from '../../../src/gateway/pod-route.js';

const run = promisify(execFile);
const TOKEN = 'trg-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pod-route-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const launch = (secretEnv: Record<string, string>) => ({
  command: 'sh',
  args: ['-c', 'printf "%s|%s|%s|%s" "$ANTHROPIC_API_KEY" "$OPENAI_API_KEY" "$OTHER" "$1"', 'cli', 'arg one'],
  env: { ANTHROPIC_BASE_URL: 'http://daemon:8081/anthropic' },
  secretEnv,
});

/** Runs a wrapped launch as the pod would, with the token file at `file`. */
async function runAsPod(wrapped: ReturnType<typeof launchWithPodToken>, file: string) {
  const env = { PATH: process.env.PATH ?? '', ...wrapped.env, [POD_TOKEN_ENV]: file, OTHER: 'kept' };
  return run(wrapped.command, wrapped.args, { env }).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );
}

describe('launchWithPodToken', () => {
  it('exports the token from its file under every name that held it, and keeps the other secrets as secrets', async () => {
    const wrapped = launchWithPodToken(
      launch({ ANTHROPIC_API_KEY: TOKEN, OPENAI_API_KEY: TOKEN, GITHUB_TOKEN: 'ghp-real' }),
      TOKEN,
      '/workspace/.triage/runs/r1',
    );
    expect(wrapped.secretEnv).toEqual({ GITHUB_TOKEN: 'ghp-real' });
    expect(JSON.stringify({ ...wrapped, secretEnv: undefined })).not.toContain(TOKEN);
    expect(wrapped.env[POD_TOKEN_ENV]).toBe('/workspace/.triage/runs/r1/gateway-pod/token');
    const file = path.join(dir, 'token');
    await writeFile(file, `${TOKEN}\n`);
    expect(await runAsPod(wrapped, file)).toEqual({ code: 0, stdout: `${TOKEN}|${TOKEN}|kept|arg one` });
  });

  it('refuses to start the CLI without its token (the file gone or empty): exit 70', async () => {
    const wrapped = launchWithPodToken(launch({ ANTHROPIC_API_KEY: TOKEN }), TOKEN, '/w');
    expect((await runAsPod(wrapped, path.join(dir, 'missing'))).code).toBe(70);
    await writeFile(path.join(dir, 'empty'), '');
    expect((await runAsPod(wrapped, path.join(dir, 'empty'))).code).toBe(70);
  });

  it('leaves a launch without the token unchanged, and refuses a name the shell cannot export', () => {
    const plain = launch({ GITHUB_TOKEN: 'ghp-real' });
    expect(launchWithPodToken(plain, TOKEN, '/w')).toBe(plain);
    expect(() => launchWithPodToken(launch({ 'BAD;rm': TOKEN }), TOKEN, '/w')).toThrow(/not a variable name/);
  });
});
