import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import { scratchDir } from '../../support/scratch.js';

const io = (): CliIO & { err: string[] } => {
  const err: string[] = [];
  return { stdout: () => undefined, stderr: (t) => err.push(t), env: {}, cwd: process.cwd(), err };
};

describe('triage-runner daemon flags', () => {
  it('exits 2 naming the flag when --max-concurrent is not a whole number', async () => {
    const cli = io();
    expect(await runCli(['daemon', '--max-concurrent', 'many'], cli)).toBe(2);
    expect(cli.err.join('')).toMatch(/--max-concurrent expects a whole number, got "many"/);
  });

  it('exits 2 listing the choices for an unknown --engine', async () => {
    const cli = io();
    expect(await runCli(['daemon', '--engine', 'podman'], cli)).toBe(2);
    expect(cli.err.join('')).toMatch(/docker, process, kubernetes/);
  });

  it('exits 2 when a flag value breaks the config schema', async () => {
    const cli = io();
    expect(await runCli(['daemon', '--max-concurrent', '0', '--http-port', '0'], cli)).toBe(2);
    expect(cli.err.join('')).toMatch(/scheduling\.max_concurrent/);
  });

  it('exits 2 before serving when http.host is not loopback and HTTP_TOKEN is unset, saying what to set', async () => {
    const cli = io();
    cli.env = {
      TRIAGE_RUNNER_HTTP_HOST: '0.0.0.0',
      TRIAGE_RUNNER_WORKSPACES_ROOT: '/nonexistent/never-created',
    };
    expect(await runCli(['daemon', '--engine', 'process'], cli)).toBe(2);
    expect(cli.err.join('')).toMatch(
      /daemon cannot start: http\.host 0\.0\.0\.0 is not a loopback address, so \/v1\/\* needs a bearer token, but the HTTP_TOKEN secret is not set: set it under secrets:/,
    );
  });

  it('exits 2 before serving when http.host is not loopback and HTTP_TOKEN is one character; validate-config reports it with what to do', async () => {
    const root = scratchDir('tr-short-token-');
    const env = {
      TRIAGE_RUNNER_HTTP_HOST: '0.0.0.0',
      TRIAGE_RUNNER_HTTP_TOKEN: 'x',
      TRIAGE_RUNNER_WORKSPACES_ROOT: root,
    };
    const daemon = { ...io(), env };
    expect(await runCli(['daemon', '--engine', 'process'], daemon)).toBe(2);
    const shortToken =
      /secrets\.HTTP_TOKEN: http\.host 0\.0\.0\.0 is not a loopback address, so the HTTP_TOKEN secret guards \/v1\/\* from the network, but it holds only 1 character \(at least 16 are needed\): make one with `openssl rand -hex 32`/;
    expect(daemon.err.join('')).toMatch(shortToken);
    const check = { ...io(), env };
    expect(await runCli(['validate-config'], check)).toBe(2);
    expect(check.err.join('')).toMatch(shortToken);
    // Loopback keeps taking any token, and 16 characters are enough beyond it.
    for (const ok of [
      { ...env, TRIAGE_RUNNER_HTTP_HOST: '127.0.0.1' },
      { ...env, TRIAGE_RUNNER_HTTP_TOKEN: 'a'.repeat(15) + 'b' },
    ]) {
      const cli = { ...io(), env: ok };
      await runCli(['validate-config'], cli);
      expect(cli.err.join('')).not.toContain('HTTP_TOKEN secret guards');
    }
  });

  it('exits 2 naming a workspaces root that does not exist, and creates nothing', async () => {
    const typo = path.join(scratchDir('tr-root-'), 'incidnets');
    const cli = io();
    expect(
      await runCli(['daemon', '--engine', 'process', '--http-port', '0', '--workspaces-root', typo], cli),
    ).toBe(2);
    expect(cli.err.join('')).toContain(`daemon cannot start: workspaces root ${typo} does not exist`);
    expect(cli.err.join('')).toContain('--create-root');
    expect(existsSync(typo)).toBe(false);
  });

  it('exits 2 when --create-root is given but the parent is missing too', async () => {
    const deep = path.join(scratchDir('tr-root-'), 'missing', 'incidents');
    const cli = io();
    const args = [
      'daemon',
      '--engine',
      'process',
      '--http-port',
      '0',
      '--workspaces-root',
      deep,
      '--create-root',
    ];
    expect(await runCli(args, cli)).toBe(2);
    expect(cli.err.join('')).toContain(
      `workspaces root ${deep} cannot be created (ENOENT): create its parent`,
    );
  });
});
