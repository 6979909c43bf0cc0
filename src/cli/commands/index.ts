/** Every `tally` command, in the order `tally --help` lists them. */
import type { Command } from '../command.js';
import { verifyCommand } from './verify.js';

export const COMMANDS: readonly Command[] = [verifyCommand];
