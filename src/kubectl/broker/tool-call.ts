import type net from 'node:net';
import { FRAME_STDERR, FRAME_STDOUT, encodeFrame, exitFrame } from '../guard/protocol.js';
import { decide, type PolicyDecision, type ToolPolicy } from '../policy/policy.js';
import type { ClusterCallRecord } from './calls.js';
import { Capture, type CapturedOutput, type PrometheusExchange } from './outputs.js';

// A call to a tool the broker serves besides kubectl (the sandbox's `promql`), on the same socket, the
// same frames, the same token and the same records as a kubectl call. The tool reads the call's words,
// names it for the persona's policy and runs it in the daemon (src/prometheus/tool.ts); the broker
// decides with the policy, answers the caller and records the call.

/** What a tool made of one call's words. */
export type ToolPlan =
  /** A call to run once the policy allows it: its helper names (`promql query`, `promql @read`). */
  | { kind: 'call'; normalized: string; names: string[] }
  /** Answered without asking anyone (usage text, a usage error, the tool unavailable in this run). */
  | { kind: 'answer'; normalized: string; result: ToolResult };

/** What a tool call returned, as the caller gets it and the records keep it. */
export interface ToolResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** A refusal (a limit, the tool unavailable): the rule recorded, e.g. `promql.max_range`. */
  refusedBy?: string;
  /** What the tool asked upstream and was answered, recorded beside the output. */
  exchange?: PrometheusExchange;
}

/** A tool the broker serves: what the caller's words ask, and running it. */
export interface BrokeredTool {
  /** Recorded as the call's tool in cluster-calls.jsonl. */
  recordAs: 'prometheus';
  plan(argv: readonly string[]): ToolPlan;
  /** Runs a planned call the policy allowed; `signal` aborts when the caller goes away or the run ends. */
  run(argv: readonly string[], signal: AbortSignal): Promise<ToolResult>;
}

export interface ToolCallContext {
  tool: BrokeredTool | undefined;
  policy: ToolPolicy;
  by: ClusterCallRecord['by'];
  now: () => Date;
  /** A slot among the broker's calls (false: the call went away while waiting); release after. */
  acquire(signal: AbortSignal): Promise<boolean>;
  release(): void;
  record(r: ClusterCallRecord, output?: CapturedOutput): Promise<void>;
}

const NOT_SERVED: ToolResult = {
  exitCode: 1,
  stdout: '',
  stderr: 'promql: this broker serves no Prometheus: metrics cannot be read in this run\n',
  refusedBy: 'promql: not served',
};

function answer(socket: net.Socket, result: Pick<ToolResult, 'stdout' | 'stderr' | 'exitCode'>): void {
  if (socket.destroyed) return;
  if (result.stdout) socket.write(encodeFrame(FRAME_STDOUT, Buffer.from(result.stdout)));
  if (result.stderr) socket.write(encodeFrame(FRAME_STDERR, Buffer.from(result.stderr)));
  socket.write(exitFrame(result.exitCode));
  socket.end();
}

/** One call decided and run: what the caller is answered, and its record and output for the logs. */
export interface ToolCall {
  result: ToolResult;
  record: ClusterCallRecord;
  output: CapturedOutput;
}

/** Decides and runs one call to a tool other than kubectl (the broker's, or the triage step's own). */
export async function runToolCall(
  ctx: Omit<ToolCallContext, 'record'>,
  argv: string[],
  signal: AbortSignal,
): Promise<ToolCall> {
  const at = ctx.now();
  const started = performance.now();
  const plan: ToolPlan = ctx.tool
    ? ctx.tool.plan(argv)
    : { kind: 'answer', normalized: ['promql', ...argv].join(' '), result: NOT_SERVED };
  let decision: PolicyDecision | undefined;
  let result: ToolResult;
  if (plan.kind === 'answer') result = plan.result;
  else {
    decision = decide(ctx.policy, plan.names);
    if (!decision.allowed) result = refusedByPolicy(ctx.policy, plan, decision);
    else if (!ctx.tool || !(await ctx.acquire(signal)))
      result = {
        exitCode: 1,
        stdout: '',
        stderr: 'promql: the call was stopped before it ran (the run is ending)\n',
      };
    else
      try {
        result = await ctx.tool.run(argv, signal);
      } finally {
        ctx.release();
      }
  }
  const refused = result.refusedBy !== undefined || decision?.allowed === false;
  const stdout = new Capture();
  const stderr = new Capture();
  stdout.add(Buffer.from(result.stdout));
  stderr.add(Buffer.from(result.stderr));
  const record: ClusterCallRecord = {
    at: at.toISOString(),
    tool: ctx.tool?.recordAs ?? 'prometheus',
    by: ctx.by,
    argv,
    normalized: plan.normalized,
    category: plan.kind === 'call' ? 'read' : 'unknown',
    decision: refused ? 'refused' : 'allowed',
    rule: result.refusedBy ?? decision?.rule ?? 'promql: answered by the broker',
    // The first line says why (a usage error's usage text stays with the caller).
    ...(refused ? { message: result.stderr.trim().split('\n')[0] ?? '' } : {}),
    exitCode: result.exitCode,
    durationMs: Math.round(performance.now() - started),
    stdoutBytes: Buffer.byteLength(result.stdout),
    stderrBytes: Buffer.byteLength(result.stderr),
  };
  const output: CapturedOutput = {
    stdout: stdout.bytes(),
    stderr: stderr.bytes(),
    droppedStdout: stdout.dropped,
    droppedStderr: stderr.dropped,
    ...(result.exchange ? { prometheus: result.exchange } : {}),
  };
  return { result, record, output };
}

/** Decides, runs, answers and records one call to a tool other than kubectl. */
export async function handleToolCall(
  ctx: ToolCallContext,
  socket: net.Socket,
  argv: string[],
  abort: AbortController,
): Promise<void> {
  const call = await runToolCall(ctx, argv, abort.signal);
  answer(socket, call.result);
  await ctx.record(call.record, call.output);
}

function refusedByPolicy(
  policy: ToolPolicy,
  plan: { normalized: string },
  decision: PolicyDecision,
): ToolResult {
  return {
    exitCode: 1,
    stdout: '',
    stderr: `promql: ${plan.normalized} is refused by the ${policy.persona} persona's tool policy (${decision.rule}); recommend the query in the report instead\n`,
    refusedBy: decision.rule,
  };
}
