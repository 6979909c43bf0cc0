/** Every `tally` command, in the order `tally --help` lists them. */
import type { Command } from '../command.js';
import { verifyCommand } from './verify.js';
import { demoCommand } from './demo.js';
import { inspectCommand } from './inspect.js';
import { openCommand } from './open.js';
import { frameCommand } from './frame.js';
import { turnCommand } from './turn.js';
import { finalizeCommand } from './finalize.js';
import { eventsCommand } from './events.js';
import { describeCommand } from './describe.js';
import { codesCommand } from './codes.js';
import { checkpointCommand } from './checkpoint.js';
import { proveCommand } from './prove.js';
import { verifyProofCommand } from './verify-proof.js';
import { replayCommand } from './replay.js';
import { gradeCommand } from './grade.js';
import { serveCommand } from './serve.js';
import { mcpCommand } from './mcp.js';

export const COMMANDS: readonly Command[] = [demoCommand, inspectCommand, verifyCommand, checkpointCommand, proveCommand, verifyProofCommand, replayCommand, gradeCommand, serveCommand, mcpCommand, openCommand, frameCommand, turnCommand, finalizeCommand, eventsCommand, describeCommand, codesCommand];
