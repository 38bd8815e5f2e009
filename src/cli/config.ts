import { ConfigError, loadConfig, type Config, type RawConfig, setIn } from '../config/index.js';
import { CliExit, EXIT, PACKAGE_ROOT, type CliIO } from './io.js';

/** Loads the configuration for a command; a bad configuration ends the command with exit 2. */
export function commandConfig(
  io: CliIO,
  file: string | undefined,
  flags: RawConfig = {},
): { config: Config; file?: string } {
  try {
    return loadConfig({ file, env: io.env, flags, cwd: io.cwd, packageRoot: PACKAGE_ROOT });
  } catch (err) {
    if (err instanceof ConfigError)
      throw new CliExit(EXIT.usage, `${err.message}\nRun \`triage-runner validate-config\` for details.`);
    throw err;
  }
}

/** Builds the nested flag layer from `[keyPath, value]` pairs, skipping flags that were not given. */
export function flagLayer(entries: [string, unknown][]): RawConfig {
  const out: RawConfig = {};
  for (const [key, value] of entries) if (value !== undefined) setIn(out, key.split('.'), value);
  return out;
}

/** Commander option parser for integers, with a usage error that names the flag. */
export const intOption =
  (flag: string) =>
  (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n))
      throw new CliExit(EXIT.usage, `${flag} expects a whole number, got ${JSON.stringify(value)}`);
    return n;
  };
