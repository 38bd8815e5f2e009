import { runClient } from './client.js';

// Entry point of the sandbox's `promql` (the generated wrapper runs this file with node): the same
// client as the guard's kubectl, asking the run's broker, which queries the cluster's Prometheus.
process.exitCode = await runClient(
  process.argv.slice(2),
  process.env,
  { stdout: process.stdout, stderr: process.stderr },
  undefined,
  'promql',
);
