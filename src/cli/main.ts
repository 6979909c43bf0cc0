#!/usr/bin/env node
/** The `tally` executable. */
import { runCli } from './run.js';

const code = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() });
process.exitCode = code;
