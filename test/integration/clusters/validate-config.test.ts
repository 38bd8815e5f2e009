import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';

const TOKEN = 'kubeconfig-token-that-must-never-be-printed';
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

function fakeIO(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: 'k' },
    cwd,
  };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}

const kubeconfig = (contexts: string[], current?: string) =>
  [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c',
    '  cluster: { server: "https://10.0.0.1:6443" }',
    'contexts:',
    ...contexts.map((c) => `- { name: ${c}, context: { cluster: c, user: u } }`),
    'users:',
    `- { name: u, user: { token: ${TOKEN} } }`,
    ...(current ? [`current-context: ${current}`] : []),
    '',
  ].join('\n');

describe('validate-config with a cluster registry', () => {
  it('checks each entry: file readable, its context defined, a current-context when none is named; never prints credentials', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tr-clusters-vc-'));
    dirs.push(dir);
    await writeFile(path.join(dir, 'good'), kubeconfig(['prod-eu-1']));
    await writeFile(path.join(dir, 'current'), kubeconfig(['staging'], 'staging'));
    await writeFile(path.join(dir, 'wrong-context'), kubeconfig(['other']));
    await writeFile(path.join(dir, 'no-current'), kubeconfig(['a', 'b']));
    // A syntax error on the line that holds the token: the message names the line, not its text.
    await writeFile(path.join(dir, 'broken'), `users:\n- { name: u, user: { token: ${TOKEN} }\n  bad: [\n`);
    const config = path.join(dir, 'config.yaml');
    const clusters = [
      'clusters:',
      '  prod-eu-1: { kubeconfig: ./good, context: prod-eu-1, aliases: [prod-eu] }',
      '  staging: { kubeconfig: ./current }',
      '  wrong: { kubeconfig: ./wrong-context, context: prod-us-1 }',
      '  nocurrent: { kubeconfig: ./no-current }',
      '  missing: { kubeconfig: ./absent }',
      '  broken: { kubeconfig: ./broken }',
      '',
    ];
    await writeFile(config, clusters.join('\n'));
    const bad = fakeIO(dir);
    expect(await runCli(['validate-config', config], bad.io)).toBe(2);
    const report = bad.stderr();
    expect(report).toContain('4 problems');
    expect(report).toContain(
      `clusters.wrong.context: context "prod-us-1" is not defined in ${path.join(dir, 'wrong-context')} (it defines: other)`,
    );
    expect(report).toMatch(
      /clusters\.nocurrent\.context: .*has no current-context; name the context to use .*\(it defines: a, b\)/,
    );
    expect(report).toMatch(/clusters\.missing\.kubeconfig: .*absent cannot be read \(ENOENT\)/);
    expect(report).toMatch(/clusters\.broken\.kubeconfig: .*broken is not valid YAML \(line \d\)/);
    expect(report).not.toMatch(/prod-eu-1|staging/);
    expect(report).not.toContain(TOKEN);

    await writeFile(config, [...clusters.slice(0, 3), ''].join('\n'));
    const good = fakeIO(dir);
    expect(await runCli(['validate-config', config], good.io)).toBe(0);
    expect(good.stdout()).toContain('configuration is valid');
  });
});
