import type { Command } from 'commander';
import { SkillsCache, type SourceStatus } from '../../context/skills-cache.js';
import { createLogger } from '../../log/logger.js';
import { commandConfig } from '../config.js';
import { EXIT, type CliIO } from '../io.js';

// `triage-runner skills list|sync`: shows the skills cache, or fetches every git source now.

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  const skills = program.command('skills').description('show or refresh the skills cache');
  const configFile = (cmd: Command) => cmd.optsWithGlobals<{ config?: string }>().config;
  skills
    .command('list')
    .description('list skills sources: scope, ref, resolved commit, last sync and status (no network)')
    .option('--json', 'print the sources as JSON')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const { config } = commandConfig(io, configFile(cmd));
      const cache = new SkillsCache({
        config,
        log: createLogger({ level: 'error', destination: { write: io.stderr } }),
      });
      const list = await cache.list();
      io.stdout(opts.json ? `${JSON.stringify(list, null, 2)}\n` : formatSources(list, cache.cacheDir));
      done(EXIT.ok);
    });
  skills
    .command('sync')
    .description('fetch every git source now; exits 1 if a source failed and has no cache to fall back on')
    .option('--json', 'print the sync report as JSON')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const { config } = commandConfig(io, configFile(cmd));
      const log = createLogger({ level: config.log.level, destination: { write: io.stderr } });
      const cache = new SkillsCache({ config, log });
      const report = await cache.sync();
      io.stdout(
        opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatSources(report.sources, cache.cacheDir),
      );
      const broken = report.sources.filter((s) => s.status === 'unavailable');
      for (const s of broken)
        io.stderr(`skills source ${s.name} unavailable: ${s.error ?? 'unknown error'}\n`);
      done(broken.length > 0 ? EXIT.failed : EXIT.ok);
    });
}

/** A plain table: source, scope, ref, commit, last sync, status. */
export function formatSources(list: SourceStatus[], cacheDir: string): string {
  const header = ['source', 'scope', 'ref', 'commit', 'last sync', 'status'];
  const rows = list.map((s) => [
    s.name,
    s.scope,
    s.kind === 'git' ? (s.ref ?? '') : `path ${s.location}`,
    s.commit ? (s.commit.startsWith('local:') ? s.commit : s.commit.slice(0, 12)) : '-',
    s.lastSync ?? '-',
    s.status + (s.error ? ` (${s.error})` : ''),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `cache: ${cacheDir}\n${[header, ...rows].map(line).join('\n')}\n`;
}
