import { constants, readFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';

/** Start time (clock ticks since boot) and state letter of a pid from /proc (Linux), or null. */
export function procStat(pid: number): { startTime: string; state: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may contain spaces and parentheses: split after the last ')'. starttime is field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', startTime: fields[19] ?? '' };
  } catch {
    return null;
  }
}

export const processStartTime = (pid: number): string | null => procStat(pid)?.startTime ?? null;

/** True when `pid` is alive (not a zombie) and, when known, started at `startTime` (not a recycled pid). */
export function isSameProcessAlive(pid: number, startTime: string | null = null): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(pid);
  if (stat === null) return true;
  if (stat.state === 'Z') return false;
  return startTime === null || stat.startTime === startTime;
}

/** The absolute path of `command` as exec would find it on `PATH`, or undefined. */
export async function resolveCommand(
  command: string,
  searchPath: string | undefined,
): Promise<string | undefined> {
  const candidates = command.includes('/')
    ? [command]
    : (searchPath ?? '')
        .split(':')
        .filter(Boolean)
        .map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return path.resolve(candidate);
  }
  return undefined;
}
