// An https Prometheus that requires a client certificate (Prometheus's own web TLS, Debian's package):
// the endpoint's CA, certificate and key, named under secrets: and read from files as secrets are, get
// the daemon's client through; without the client certificate, or trusting another CA, it cannot, and
// the readiness check says so.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterRegistry } from '../../../src/clusters/registry.js';
import { loadConfig } from '../../../src/config/index.js';
import { resolveSecrets } from '../../../src/config/secrets.js';
import { promGet } from '../../../src/prometheus/client.js';
import { resolveEndpoints } from '../../../src/prometheus/endpoint.js';
import { checkEndpoint } from '../../../src/prometheus/monitor.js';
import { requireBinary } from '../../support/alertmanager.js';
import { freePort } from '../../support/net.js';
import { prometheusBinary } from '../../support/prometheus.js';
import { tempDir } from '../../support/runs.js';
import { eventually } from '../../support/wait.js';

const binary = prometheusBinary();
const openssl = requireBinary(['openssl']);
const run = promisify(execFile);

/** A CA, a server certificate for 127.0.0.1 and a client certificate it signed, and a second CA. */
async function certificates(dir: string): Promise<void> {
  const ssl = (...args: string[]) => run(openssl ?? 'openssl', args, { cwd: dir });
  for (const ca of ['ca', 'other-ca']) {
    await ssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${ca}`,
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
    );
  }
  await writeFile(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  for (const [name, ext] of [
    ['server', ['-extfile', 'san.ext']],
    ['client', []],
  ] as const) {
    await ssl(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    );
    await ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      `${name}.crt`,
      ...ext,
    );
  }
}

describe.skipIf(!binary || !openssl)('an https Prometheus that requires a client certificate', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let child: ChildProcess | undefined;
  let url: string;

  beforeAll(async () => {
    root = await tempDir('tr-prom-tls-');
    const dir = root.dir;
    await certificates(dir);
    await writeFile(
      path.join(dir, 'web.yml'),
      [
        'tls_server_config:',
        `  cert_file: ${path.join(dir, 'server.crt')}`,
        `  key_file: ${path.join(dir, 'server.key')}`,
        '  client_auth_type: RequireAndVerifyClientCert',
        `  client_ca_file: ${path.join(dir, 'ca.crt')}`,
        '',
      ].join('\n'),
    );
    await writeFile(path.join(dir, 'prometheus.yml'), 'global: {}\n');
    await mkdir(path.join(dir, 'tsdb'));
    const port = await freePort();
    url = `https://127.0.0.1:${port}/`;
    child = spawn(
      binary ?? '',
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        `--web.config.file=${path.join(dir, 'web.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'tsdb')}`,
        '--log.level=warn',
      ],
      { stdio: 'ignore' },
    );
  }, 60_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    await root?.cleanup();
  });

  /** The endpoint as the daemon resolves it from a configuration whose TLS secrets are files. */
  async function endpoint(tls: Record<string, string>) {
    const file = path.join(root.dir, 'config.yaml');
    const secrets = Object.fromEntries(Object.values(tls).map((name) => [name, { file: `${name}.pem` }]));
    await writeFile(file, JSON.stringify({ secrets, prometheus: { url, tls } }));
    const files: [string, string][] = [
      ['PROM_CA', 'ca.crt'],
      ['PROM_OTHER_CA', 'other-ca.crt'],
      ['PROM_CERT', 'client.crt'],
      ['PROM_KEY', 'client.key'],
    ];
    for (const [name, src] of files)
      await writeFile(path.join(root.dir, `${name}.pem`), await readFile(path.join(root.dir, src)));
    const config = loadConfig({ file, env: {}, cwd: root.dir }).config;
    const resolved = resolveEndpoints(
      clusterRegistry(config).listClusters(),
      resolveSecrets(config, {}).values,
      true,
    );
    const found = resolved.get('default');
    if (!found) throw new Error('no endpoint');
    return found;
  }

  it('answers the daemon that presents the client certificate and trusts the CA, and no one else', async () => {
    const good = await endpoint({ ca: 'PROM_CA', cert: 'PROM_CERT', key: 'PROM_KEY' });
    const ready = await eventually(
      'the https Prometheus to answer',
      async () => {
        const access = await checkEndpoint('default', good);
        return access.reachable ? access : undefined;
      },
      30_000,
      200,
    );
    expect(ready.detail).toMatch(/^Prometheus 2\.\S+ answers at https:\/\/127\.0\.0\.1:\d+$/);
    if (!good.ok) throw new Error(good.problem);
    const query = await promGet(
      good.endpoint,
      { endpoint: 'query', params: [['query', 'vector(42)']] },
      {
        timeoutMs: 10_000,
        maxBytes: 65536,
      },
    );
    expect(query).toMatchObject({
      ok: true,
      envelope: {
        status: 'success',
        data: { resultType: 'vector', result: [{ metric: {}, value: [expect.any(Number), '42'] }] },
      },
    });

    const noClientCert = await checkEndpoint('default', await endpoint({ ca: 'PROM_CA' }));
    expect(noClientCert.reachable).toBe(false);
    expect(noClientCert.detail).toMatch(/^Prometheus at https:\/\/127\.0\.0\.1:\d+ cannot be reached \(/);
    const wrongCa = await checkEndpoint(
      'default',
      await endpoint({ ca: 'PROM_OTHER_CA', cert: 'PROM_CERT', key: 'PROM_KEY' }),
    );
    expect(wrongCa.reachable).toBe(false);
    expect(wrongCa.detail).toContain('cannot be reached');
  }, 60_000);
});
