// Runs the scripted model as a server, to run the eval suite and the saved examples (a generic
// investigation for an incident without a script) offline with the real Claude Code CLI:
//   npx tsx test/support/scripted-model-server.ts [--port N] [--scripts DIR] [--cases DIR]
// prints ANTHROPIC_BASE_URL=… and serves until interrupted.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadScripts, startScriptedModel } from './providers/scripted-anthropic.js';
import { REPO_ROOT } from './runs.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    scripts: { type: 'string', default: path.join(REPO_ROOT, 'test', 'fixtures', 'evals', 'scripted') },
    cases: { type: 'string', default: path.join(REPO_ROOT, 'examples', 'evals') },
  },
});
const scripts = await loadScripts(path.resolve(values.scripts), path.resolve(values.cases));
const model = await startScriptedModel(scripts, Number(values.port));
process.stdout.write(`ANTHROPIC_BASE_URL=${model.url}\n`);
process.stderr.write(`scripted model serving ${scripts.size} case(s); Ctrl-C to stop\n`);
const stop = () => {
  void model.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
