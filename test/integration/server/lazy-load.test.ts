import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// Start-up time matters for every command: only the daemon's server may load fastify, on start.

const ROOT = path.resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);

/** Runs `script` in a fresh node (ESM, TypeScript through tsx) and returns what it printed. */
async function inFreshNode(script: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
  });
  return stdout.trim();
}

const FASTIFY_LOADED = `
const { default: Module } = await import('node:module');
const loaded = Object.keys(Module._cache).some((f) => f.includes('/node_modules/fastify/'));
`;

describe('loading the HTTP server', () => {
  it('triage-runner --version loads the whole CLI but not fastify', async () => {
    const out = await inFreshNode(`
      const { runCli } = await import('./src/cli/program.ts');
      const code = await runCli(['--version'], { stdout: () => {}, stderr: () => {}, env: {}, cwd: process.cwd() });
      ${FASTIFY_LOADED}
      console.log(JSON.stringify({ code, loaded }));
    `);
    expect(JSON.parse(out)).toEqual({ code: 0, loaded: false });
  });

  it('starting the server loads fastify (the check above can fail)', async () => {
    const out = await inFreshNode(`
      const { startHttpServer } = await import('./src/server/http.ts');
      const server = await startHttpServer({
        port: 0, host: '127.0.0.1',
        readiness: async () => ({ ok: true, checks: [] }),
        metrics: { render: async () => '', contentType: 'text/plain' },
      });
      await server.close();
      ${FASTIFY_LOADED}
      console.log(JSON.stringify({ loaded }));
    `);
    expect(JSON.parse(out)).toEqual({ loaded: true });
  });
});
