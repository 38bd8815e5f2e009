import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseKubectl } from '../../../src/kubectl/parse.js';
import { parseOutput } from '../../../src/evidence/parse/index.js';
import {
  KUBECTL,
  maskVolatile,
  readShopRecording,
  recordShop,
  type ShopRecording,
} from '../../support/kube-objects/record.js';

// The recorded kubectl outputs the evidence parsers and corpus are tested on are what Debian's kubectl
// prints: every call is run again with the real kubectl against the stand-in API server serving the
// `shop` objects, and must print what the recording holds (ages, dates and ports aside). A kubectl
// upgrade that changes the describe layout or a table fails here; re-record with
// `npx tsx test/support/kube-objects/record.ts` and look at what the parsers make of it.

let fresh: ShopRecording;
let committed: ShopRecording;

beforeAll(async () => {
  try {
    execFileSync(KUBECTL, ['version', '--client'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      `this test needs the real kubectl (${KUBECTL}): run .ci/install-test-tools.sh, or set TRIAGE_TEST_KUBECTL`,
    );
  }
  [fresh, committed] = await Promise.all([recordShop(), readShopRecording()]);
}, 120_000);

describe('the recorded kubectl outputs', () => {
  it('are what the real kubectl prints for the shop objects now', () => {
    expect(fresh.calls.map((c) => c.name)).toEqual(committed.calls.map((c) => c.name));
    for (const [i, call] of fresh.calls.entries()) {
      const kept = committed.calls[i];
      expect(call.exitCode, call.name).toBe(kept?.exitCode);
      expect(maskVolatile(call.stdout), call.name).toBe(maskVolatile(kept?.stdout ?? ''));
      if (call.name !== 'get-pods-down')
        expect(maskVolatile(call.stderr), call.name).toBe(maskVolatile(kept?.stderr ?? ''));
    }
  });

  it("parse into the objects' fields: states, reasons, exit codes, restarts, resources, events", () => {
    const fields = (name: string) => {
      const call = fresh.calls.find((c) => c.name === name);
      if (!call) throw new Error(name);
      return parseOutput(parseKubectl(call.argv), call.stdout);
    };
    const api = fields('describe-api').pods[0]?.containers[0];
    expect(api).toMatchObject({
      reason: 'CrashLoopBackOff',
      lastReason: 'Error',
      lastExitCode: 1,
      restartCount: 14,
    });
    expect(fields('yaml-api').pods[0]?.containers[0]).toEqual(api);
    expect(fields('describe-worker').pods[0]?.containers[0]).toMatchObject({
      lastReason: 'OOMKilled',
      lastExitCode: 137,
    });
    expect(fields('get-pods').pods.map((p) => p.status)).toEqual(['CrashLoopBackOff', 'Running', 'Running']);
    expect(fields('get-events').events.map((e) => e.reason)).toEqual(['BackOff', 'Pulled', 'Unhealthy']);
    expect(fresh.calls.find((c) => c.name === 'get-pods-down')?.stderr).toMatch(/connection refused/);
  });
});
