import { main } from './main.js';

// Entry point of the frozen-cluster kubectl (the generated wrapper runs this file).
process.exitCode = main(process.argv.slice(2), process.env);
