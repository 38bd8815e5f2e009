#!/usr/bin/env node
import { runCli } from './program.js';
import { processIO } from './io.js';

const FORCED_EXIT_MS = 10_000;

const code = await runCli(process.argv.slice(2), processIO());
process.exitCode = code;
// Every command closes what it opened; a handle a dependency leaves open (a hung engine request) must
// not keep a stopped daemon alive. The timer is unref'd, so a clean exit does not wait for it.
setTimeout(() => process.exit(code), FORCED_EXIT_MS).unref();
