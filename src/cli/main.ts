#!/usr/bin/env node
import { runCli } from './program.js';
import { processIO } from './io.js';

const code = await runCli(process.argv.slice(2), processIO());
process.exitCode = code;
