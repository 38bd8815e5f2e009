import { runClient } from './client.js';

// Entry point of the guard's `kubectl` (the generated wrapper runs this file with node).
process.exitCode = await runClient(process.argv.slice(2), process.env, {
  stdout: process.stdout,
  stderr: process.stderr,
});
