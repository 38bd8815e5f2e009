// validate-config with Prometheus endpoints: the schema's rules (secret names declared, one kind of
// credential, no credentials in the URL, prometheus: beside clusters:), unset secrets as warnings and
// TLS material that cannot be used as problems; the credentials' values are never printed.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import { agentSecrets, daemonSecretNames } from '../../../src/config/secrets.js';
import { loadConfig } from '../../../src/config/index.js';
import { clusterRegistry } from '../../../src/clusters/registry.js';
import { resolveEndpoints } from '../../../src/prometheus/endpoint.js';

const TOKEN = 'prom-bearer-token-that-must-never-be-printed-0123';
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function scratch(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tr-prom-vc-'));
  dirs.push(dir);
  return dir;
}

function fakeIO(cwd: string, env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: 'k', ...env },
    cwd,
  };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}

describe('validate-config with Prometheus endpoints', () => {
  it('reports each schema problem with its path: an undeclared secret, two credentials, a URL holding one, prometheus: beside clusters:', async () => {
    const dir = await scratch();
    const config = path.join(dir, 'config.yaml');
    await writeFile(
      config,
      [
        'secrets:',
        '  PROM_TOKEN: { env: PROM_TOKEN }',
        'prometheus: { url: "http://127.0.0.1:9090/" }',
        'clusters:',
        '  prod: { prometheus: { url: "https://prom.example/", bearer_token: PROM_MISSING } }',
        '  both: { prometheus: { url: "https://prom.example/", bearer_token: PROM_TOKEN, basic_auth: { username: u, password: PROM_TOKEN } } }',
        `  inline: { prometheus: { url: "https://user:${TOKEN}@prom.example/" } }`,
        '  halfcert: { prometheus: { url: "https://prom.example/", tls: { cert: PROM_TOKEN } } }',
        '',
      ].join('\n'),
    );
    const run = fakeIO(dir);
    expect(await runCli(['validate-config', config], run.io)).toBe(2);
    const report = run.stderr();
    expect(report).toContain(
      'clusters.prod.prometheus.bearer_token: PROM_MISSING is not declared under secrets:',
    );
    expect(report).toContain('clusters.both.prometheus: give bearer_token or basic_auth, not both');
    expect(report).toContain(
      'clusters.inline.prometheus.url: the URL must hold no user, password, query or fragment',
    );
    expect(report).toContain(
      'clusters.halfcert.prometheus.tls: a client certificate needs both cert and key',
    );
    expect(report).toContain('prometheus: prometheus: and clusters: are both set');
    expect(report).not.toContain(TOKEN);
  });

  it('warns about an unset credential and refuses TLS material that is not PEM, quoting neither', async () => {
    const dir = await scratch();
    const config = path.join(dir, 'config.yaml');
    await writeFile(path.join(dir, 'ca.pem'), `not a certificate ${TOKEN}\n`);
    await writeFile(
      config,
      [
        'secrets:',
        '  PROM_TOKEN: { env: PROM_TOKEN }',
        '  PROM_CA: { file: ./ca.pem }',
        'clusters:',
        '  prod: { prometheus: { url: "https://prom.example/", bearer_token: PROM_TOKEN } }',
        '  tls: { prometheus: { url: "https://prom.example/", tls: { ca: PROM_CA } } }',
        '',
      ].join('\n'),
    );
    const run = fakeIO(dir);
    expect(await runCli(['validate-config', config], run.io)).toBe(2);
    const report = run.stderr();
    expect(report).toContain('1 problem');
    expect(report).toContain(
      'clusters.tls.prometheus.tls: the CA cannot be used: its secret holds no PEM certificate',
    );
    expect(report).toContain(
      'clusters.prod.prometheus: clusters.prod.prometheus.bearer_token names PROM_TOKEN, which is not set',
    );
    // The generic "no agent reads it" warning is not repeated for an endpoint's secret.
    expect(report).not.toContain('no agent reads it');
    expect(report).not.toContain(TOKEN);
  });

  it('accepts an endpoint whose secrets are set and whose TLS material is PEM', async () => {
    const dir = await scratch();
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await writeFile(path.join(dir, 'key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const config = path.join(dir, 'config.yaml');
    await writeFile(
      config,
      [
        'secrets:',
        '  PROM_TOKEN: { env: PROM_TOKEN }',
        '  PROM_KEY: { file: ./key.pem }',
        'prometheus: { url: "https://prom.example/prometheus", bearer_token: PROM_TOKEN, tls: { key: PROM_KEY, cert: PROM_KEY } }',
        '',
      ].join('\n'),
    );
    const run = fakeIO(dir, { PROM_TOKEN: TOKEN });
    // A key given as the certificate cannot be used: that is the one problem here.
    expect(await runCli(['validate-config', config], run.io)).toBe(2);
    expect(run.stderr()).toContain('prometheus.tls: the client certificate cannot be used (');
    await writeFile(
      config,
      [
        'secrets:',
        '  PROM_TOKEN: { env: PROM_TOKEN }',
        'prometheus: { url: "https://prom.example/prometheus", bearer_token: PROM_TOKEN }',
        '',
      ].join('\n'),
    );
    const good = fakeIO(dir, { PROM_TOKEN: TOKEN });
    expect(await runCli(['validate-config', config], good.io)).toBe(0);
    expect(good.stderr()).not.toContain('prometheus');
  });
});

describe('Prometheus credentials stay with the daemon', () => {
  it('are daemon secrets, never among the secrets handed to an agent, and become the endpoint’s Authorization header', async () => {
    const dir = await scratch();
    const file = path.join(dir, 'config.yaml');
    await writeFile(
      file,
      [
        'secrets:',
        '  PROM_TOKEN: { env: PROM_TOKEN }',
        '  PROM_PASSWORD: { env: PROM_PASSWORD }',
        'clusters:',
        '  prod: { prometheus: { url: "https://prom.example/", bearer_token: PROM_TOKEN } }',
        '  staging: { prometheus: { url: "http://prom.staging:9090/", basic_auth: { username: triage, password: PROM_PASSWORD } } }',
        '  dev: {}',
        '',
      ].join('\n'),
    );
    const config = loadConfig({ file, env: {}, cwd: dir }).config;
    expect([...daemonSecretNames(config)]).toEqual(expect.arrayContaining(['PROM_TOKEN', 'PROM_PASSWORD']));
    const values = { PROM_TOKEN: TOKEN, PROM_PASSWORD: 'staging-password-0123', ANTHROPIC_API_KEY: 'k' };
    expect(agentSecrets(config, values)).toEqual({ ANTHROPIC_API_KEY: 'k' });
    const endpoints = resolveEndpoints(clusterRegistry(config).listClusters(), values);
    expect([...endpoints.keys()]).toEqual(['prod', 'staging']);
    const prod = endpoints.get('prod');
    const staging = endpoints.get('staging');
    expect(prod?.ok && prod.endpoint.authorization).toBe(`Bearer ${TOKEN}`);
    expect(staging?.ok && staging.endpoint.authorization).toBe(
      `Basic ${Buffer.from('triage:staging-password-0123').toString('base64')}`,
    );
    const unset = resolveEndpoints(clusterRegistry(config).listClusters(), {});
    expect(unset.get('prod')).toEqual({
      ok: false,
      cluster: 'prod',
      problem:
        'clusters.prod.prometheus.bearer_token names PROM_TOKEN, which is not set: set the variable or file of each under secrets: where the daemon runs',
    });
  });
});
