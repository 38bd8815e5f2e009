// Thin wrapper over the real `git` binary (no shell). Failures become GitError with the command,
// exit code and the tail of stderr, so callers branch on fields and users see what git said.

export class GitError extends Error {
  constructor(
    message: string,
    readonly args: string[],
    readonly exitCode: number | undefined,
    readonly stderrTail: string,
    readonly timedOut: boolean,
  ) {
    super(message);
    this.name = 'GitError';
  }
}

export interface GitOptions {
  cwd?: string;
  timeoutMs: number;
  env?: Record<string, string>;
}

const tail = (text: string, max = 600): string => (text.length > max ? `…${text.slice(-max)}` : text).trim();

/** Runs `git args…`; resolves to trimmed stdout, rejects with GitError. */
export async function git(args: string[], options: GitOptions): Promise<string> {
  // Loaded with the first git call: an idle daemon that only answers health checks does not pay for it.
  const { execa } = await import('execa');
  const result = await execa('git', args, {
    cwd: options.cwd,
    timeout: options.timeoutMs,
    reject: false,
    stdin: 'ignore',
    env: {
      // Never prompt for credentials in a daemon; fail instead.
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: 'true',
      SSH_ASKPASS: 'true',
      GCM_INTERACTIVE: 'never',
      LC_ALL: 'C',
      ...options.env,
    },
    extendEnv: true,
  });
  if (result.failed) {
    const stderr = typeof result.stderr === 'string' ? result.stderr : '';
    const what = result.timedOut
      ? `timed out after ${options.timeoutMs} ms`
      : `exited with code ${result.exitCode ?? 'none'}${result.signal ? ` (${result.signal})` : ''}`;
    throw new GitError(
      `git ${args.join(' ')} ${what}: ${tail(stderr) || tail(String(result.message))}`,
      args,
      result.exitCode,
      tail(stderr),
      result.timedOut === true,
    );
  }
  return typeof result.stdout === 'string' ? result.stdout.trim() : '';
}
