#!/usr/bin/env node
import { runCli } from './program.js';
import { processIO } from './io.js';

// Every command closes what it opened (the daemon: intake, runs, executor, engines, skills cache,
// status index, notifier, HTTP, in that order), so the process ends on its own once the command
// returns; a test asserts no handle is left. There is deliberately no forced-exit timer: a hung close
// shows up as a process that does not exit (the service manager's stop timeout then kills it), not as
// a silently cut shutdown. A second SIGTERM/SIGINT forces the exit.
process.exitCode = await runCli(process.argv.slice(2), processIO());
