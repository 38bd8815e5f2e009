// Recorded runs for the evidence corpus: calls of the `shop` recording (what the real kubectl printed,
// test/support/kube-objects/record.ts) turned into cluster-calls.jsonl and cluster-outputs.jsonl records
// as the broker writes them, outputs redacted by the daemon's own redactor.
import type { EvidenceInput } from '../../src/evidence/check.js';
import { Redactor } from '../../src/log/redact.js';
import { callOf, type ShopRecording } from './kube-objects/record.js';
import { recorded, type RecordedCall } from './evidence.js';
import { recordedPromql, type PromqlCall } from './evidence-promql.js';

export interface RunSpec {
  /** Names of recorded calls the agent made, in order (see SHOP_CALLS). */
  calls: string[];
  /** Calls the triage script made through the broker. */
  triage?: string[];
  /** The triage script's own report and log. */
  triageText?: string;
  alertText?: string;
  /** The access check found the cluster unreachable. */
  unreachable?: string;
  /** promql calls the agent made after its kubectl calls, answered as given. */
  promql?: PromqlCall[];
  /** Cut the named call's recorded stdout after this many bytes (the per-call bound). */
  cut?: { call: string; keep: number };
}

const redactor = new Redactor();

export function runOf(shop: ShopRecording, spec: RunSpec): Omit<EvidenceInput, 'report'> {
  const calls: RecordedCall[] = [
    ...(spec.triage ?? []).map((name) => ({ name, by: 'triage' as const })),
    ...spec.calls.map((name) => ({ name, by: 'guard' as const })),
  ].map(({ name, by }) => {
    const call = callOf(shop, name);
    return {
      argv: call.argv,
      exitCode: call.exitCode,
      stdout: redactor.redact(call.stdout),
      stderr: redactor.redact(call.stderr),
      by,
    };
  });
  const run = recorded(calls);
  if (spec.cut) {
    const at = spec.calls.indexOf(spec.cut.call) + (spec.triage?.length ?? 0);
    const output = run.outputs[at];
    if (output) {
      const dropped = Buffer.byteLength(output.stdout) - spec.cut.keep;
      output.stdout = Buffer.from(output.stdout).subarray(0, spec.cut.keep).toString('utf8');
      output.cut = { stdoutBytes: dropped, stderrBytes: 0, by: 'call' };
    }
  }
  const promql = recordedPromql(spec.promql ?? [], run.calls.length + 1);
  return {
    calls: [...run.calls, ...promql.calls],
    outputs: [...run.outputs, ...promql.outputs],
    ...(spec.triageText ? { triageText: spec.triageText } : {}),
    ...(spec.alertText ? { alertText: spec.alertText } : {}),
    ...(spec.unreachable ? { unreachable: spec.unreachable } : {}),
  };
}
