/**
 * `--judge <url>` for the commands that build a ruler (`tally serve`, `tally
 * turn`): the OpenAI-compatible judge the referee asks for mandates with
 * semantic rules, and where its verdict signature comes from — the judge's
 * own response header (`--judge-signature-header`, e.g. `tally judge serve`'s
 * `x-verdict-signature`) or a key the operator holds (`--judge-key`, labelled
 * `signed_by: operator` in the ruling).
 */
import type { Judge } from '../../referee/index.js';
import { CliError, str, type CommandIO } from '../command.js';

/** The judge options, for a command's `options`. */
export const JUDGE_OPTIONS = {
  judge: { type: 'string' },
  'judge-model': { type: 'string' },
  'judge-signature-header': { type: 'string' },
  'judge-key': { type: 'string' },
  'judge-timeout': { type: 'string' },
} as const;

/** Help lines for {@link JUDGE_OPTIONS}, the option column `width` wide. */
export function judgeHelp(width = 18): string {
  const pad = ' '.repeat(width + 2);
  return [
    `  ${'--judge <url>'.padEnd(width)}the OpenAI-compatible judge for mandates with rules: its base URL,`,
    `${pad}e.g. http://127.0.0.1:8090/v1 (bearer key from $TALLY_JUDGE_API_KEY);`,
    `${pad}without it such intents are denied (judge_unavailable)`,
    `  ${'--judge-model <id>'.padEnd(width)}the model asked (default tally-local-rules-v1, the model of 'tally judge serve')`,
    `  ${'--judge-signature-header <name>'.padEnd(width)}`,
    `${pad}the judge signs its own answers in this response header`,
    `${pad}(tally judge serve: x-verdict-signature)`,
    `  ${'--judge-key <file>'.padEnd(width)}or: the operator signs each answer with this secp256k1 key`,
    `${pad}(0x + 64 hex); the ruling labels it signed_by operator`,
    `  ${'--judge-timeout <ms>'.padEnd(width)}how long one judge call may take (default 20000)`,
  ].join('\n');
}

/** The judge the options describe, or `undefined` without `--judge`; a usage error for an incomplete or contradictory set. */
export async function judgeFromOptions(values: Record<string, unknown>, io: CommandIO): Promise<Judge | undefined> {
  const url = str(values, 'judge');
  const header = str(values, 'judge-signature-header');
  const keyPath = str(values, 'judge-key');
  const model = str(values, 'judge-model');
  const timeout = str(values, 'judge-timeout');
  if (url === undefined) {
    if (header !== undefined || keyPath !== undefined || model !== undefined || timeout !== undefined) throw new CliError('--judge-model, --judge-signature-header, --judge-key and --judge-timeout need --judge <url>');
    return undefined;
  }
  if (!/^https?:\/\/[\x21-\x7e]+$/.test(url)) throw new CliError('--judge must be an http(s) URL, e.g. http://127.0.0.1:8090/v1');
  if ((header === undefined) === (keyPath === undefined)) {
    throw new CliError('--judge needs exactly one of --judge-signature-header <name> (the judge signs its own answers, e.g. x-verdict-signature for tally judge serve) or --judge-key <file> (the operator signs them)');
  }
  if (header !== undefined && !/^[A-Za-z0-9-]{1,64}$/.test(header)) throw new CliError('--judge-signature-header must be a header name (1-64 letters, digits, -)');
  let timeoutMs: number | undefined;
  if (timeout !== undefined) {
    if (!/^[1-9][0-9]{0,8}$/.test(timeout)) throw new CliError('--judge-timeout must be a whole number of milliseconds from 1 to 999999999');
    timeoutMs = Number(timeout);
  }
  const [{ createOpenAiJudge, LOCAL_JUDGE_MODEL }, { readSecpKeyFile }] = await Promise.all([import('../../referee/index.js'), import('./judge.js')]);
  const apiKey = io.env['TALLY_JUDGE_API_KEY'];
  try {
    return createOpenAiJudge({
      baseUrl: url,
      model: model ?? LOCAL_JUDGE_MODEL,
      signature: keyPath !== undefined ? { key: await readSecpKeyFile(keyPath, io) } : { header: header ?? '' },
      ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`--judge: ${(e as Error).message}`);
  }
}
