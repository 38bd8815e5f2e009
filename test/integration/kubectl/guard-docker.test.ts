// The kubectl guard under the docker engine, in the real agent image (triage-agent:latest, which has
// node and Debian's kubectl): a stand-in agent (sh) tries the cluster every way it can. Its `kubectl`
// is the guard's, which asks the run's broker through the socket in the run folder; the delete, a raw
// DELETE, a KUBECONFIG swap and a hand-written request to the socket are refused by the broker; the
// image's own kubectl, called by absolute path, has no credentials to use (the daemon's kubeconfig is
// never mounted); only the read reaches the daemon-side kubectl.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { CONTAINER_PATH_PREPEND } from '../../../src/run/layout.js';
import { readCallLog } from '../../../src/kubectl/broker/calls.js';
import { FAKE_PODS_TABLE, guardFixture, type GuardFixture } from '../../support/guard.js';
import { AGENT_IMAGE, dockerHost, requireAgentImage, requireEngine } from '../../support/engine.js';
import { makeWorkspace, testConfig } from '../../support/runs.js';
import { runShAgent } from '../../support/sh-agent.js';
import { RUN_FILES } from '../../../src/workspace/layout.js';

const docker = await requireEngine();
const hasImage = docker ? await requireAgentImage(docker) : false;

/** A request written by hand to the broker's socket, as an agent that skips the guard's client could. */
const RAW_REQUEST = `node -e '
const s = require("net").createConnection(process.env.TRIAGE_RUN_DIR + "/kubectl.sock");
s.on("connect", () => s.write(JSON.stringify({ v: 1, argv: ["delete", "pod", "web-1"] }) + "\\n"));
s.on("data", (d) => process.stdout.write("socket said: " + d.subarray(5).toString().split("\\n")[0] + "\\n"));
s.on("end", () => s.destroy());
'`;

describe.skipIf(!docker || !hasImage)('kubectl guard under the docker engine', () => {
  let fx: GuardFixture;
  beforeAll(async () => {
    fx = await guardFixture('triage-guard-docker-');
  });
  afterAll(async () => fx?.root.cleanup());

  it('refuses the delete inside the container and passes the get to the daemon-side kubectl', async () => {
    const config = testConfig(fx.root.dir, {
      agent: { image: AGENT_IMAGE },
      docker: { host: dockerHost(), network: 'none' },
      kubeconfig: fx.kubeconfig,
      kubectl: { command: fx.real.command },
    });
    const workspace = await makeWorkspace(fx.root.dir);
    const { outcome, bundle, stdout } = await runShAgent(config, workspace, `guard-docker-${process.pid}`, [
      'echo "kubectl=$(command -v kubectl)"',
      'echo "agent KUBECONFIG=${KUBECONFIG:-unset}"',
      'ls /etc/triage/kubeconfig >/dev/null 2>&1 && echo kubeconfig=mounted || echo kubeconfig=absent',
      `test -e ${fx.kubeconfig} && echo daemon_kubeconfig=visible || echo daemon_kubeconfig=invisible`,
      'kubectl get pods -n shop; echo "get exit=$?"',
      'kubectl delete pod web-1 -n shop; echo "delete exit=$?"',
      'kubectl delete --raw /api/v1/namespaces/shop/pods/web-1; echo "raw exit=$?"',
      'KUBECONFIG=/tmp/x kubectl get pods; echo "swap exit=$?"',
      '/usr/bin/kubectl delete pod web-1 -n shop --request-timeout=3s 2>&1; echo "absolute exit=$?"',
      RAW_REQUEST,
      `echo x > ${CONTAINER_PATH_PREPEND}/0/kubectl 2>/dev/null && echo guard=writable || echo guard=read-only`,
    ]);
    expect(outcome, stdout).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(stdout).toContain(`kubectl=${CONTAINER_PATH_PREPEND}/0/kubectl`);
    expect(stdout).toContain('agent KUBECONFIG=unset');
    expect(stdout).toContain('kubeconfig=absent');
    expect(stdout).toContain('daemon_kubeconfig=invisible');
    expect(stdout).toContain(`${FAKE_PODS_TABLE}get exit=0`);
    expect(stdout).toContain('delete exit=1');
    expect(stdout).toContain('raw exit=1');
    expect(stdout).toContain('swap exit=1');
    // The image's kubectl has no cluster to talk to: no kubeconfig, no credentials, no network.
    expect(stdout).toContain('The connection to the server localhost:8080 was refused');
    expect(stdout).toContain('absolute exit=1');
    expect(stdout).toContain('socket said: kubectl guard: refused `kubectl delete pods/web-1`');
    expect(stdout).toContain('guard=read-only');

    expect(await fx.real.calls()).toEqual([
      `get pods -n shop | KUBECONFIG=${fx.kubeconfig} TRIAGE_STAGE=agent`,
    ]);
    const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
    expect(records.map((r) => [r.decision, r.normalized])).toEqual([
      ['allowed', 'get pods --namespace=shop'],
      ['refused', 'delete pods/web-1 --namespace=shop'],
      ['refused', 'delete --raw=/api/v1/namespaces/shop/pods/web-1'],
      ['refused', 'get pods'],
      ['refused', 'delete pods/web-1'],
    ]);
    const result = await readRunResult(bundle);
    expect(result.ok && result.value.kubectl).toEqual({
      guard: 'broker',
      calls: 5,
      refused: 4,
      log: RUN_FILES.clusterCalls,
    });
  });
});
