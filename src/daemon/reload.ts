import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';

// SIGHUP: the configuration is read and checked again, as `validate-config` checks it. A file with
// problems is refused, each problem logged, and the daemon goes on with the configuration it has; a
// valid one restarts the daemon in the same process with it (intake closes, in-flight runs finish
// within scheduling.shutdown_timeout or are interrupted and re-queued, then everything is built again).

/** The configuration read again: valid (with its warnings), or its problems one line each. */
export type ConfigReading =
  { ok: true; config: Config; warnings: string[] } | { ok: false; problems: string[] };

/** Reads and checks the configuration the daemon was started with (same file, flags and environment). */
export type ConfigReader = () => Promise<ConfigReading>;

/** Handles SIGHUP on `proc` until the returned function removes the handler. */
export function onReload(
  proc: NodeJS.Process,
  log: Logger,
  read: ConfigReader,
  restart: (config: Config) => void,
): () => void {
  let state: 'idle' | 'checking' | 'restarting' = 'idle';
  const onHangUp = () => {
    if (state !== 'idle') {
      log.info({ signal: 'SIGHUP', state }, 'SIGHUP received: a reload is already under way');
      return;
    }
    state = 'checking';
    log.info({ signal: 'SIGHUP' }, 'SIGHUP received: checking the configuration again');
    void read()
      .then((r) => {
        if (!r.ok) {
          state = 'idle';
          log.error(
            { problems: r.problems },
            'configuration reload refused: the configuration has problems; the daemon goes on with the one it has (fix them, check with validate-config, send SIGHUP again)',
          );
          return;
        }
        for (const warning of r.warnings) log.warn({ warning }, 'configuration warning');
        state = 'restarting';
        log.info(
          {},
          'configuration valid: restarting the daemon with it (in-flight runs finish or are re-queued)',
        );
        restart(r.config);
      })
      .catch((err: unknown) => {
        state = 'idle';
        log.error(
          { err: errorMessage(err) },
          'configuration reload failed: the daemon goes on with the configuration it has',
        );
      });
  };
  proc.on('SIGHUP', onHangUp);
  return () => proc.off('SIGHUP', onHangUp);
}
