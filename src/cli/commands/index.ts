/** Every `tally` command, in the order `tally --help` lists them. */
import type { Command } from '../command.js';
import { verifyCommand } from './verify.js';
import { checkpointCommand } from './checkpoint.js';
import { proveCommand } from './prove.js';
import { verifyProofCommand } from './verify-proof.js';
import { replayCommand } from './replay.js';
import { gradeCommand } from './grade.js';
import { serveCommand } from './serve.js';
import { mcpCommand } from './mcp.js';

export const COMMANDS: readonly Command[] = [verifyCommand, checkpointCommand, proveCommand, verifyProofCommand, replayCommand, gradeCommand, serveCommand, mcpCommand];
