import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { splitLines } from '../../codec/index.js';
import { isDigestHex, parseStrictJson, type ChainPin } from '../../protocol/index.js';
import { changeLine, externalFactText, FIELD_CHANGES_MAX, replayFile, type ReplayOptions } from '../../receipt/index.js';
import { chooseReplayRuler, sealedAuthorityOf, REPLAY_RULER_CHOICES as RULERS, type ReplayChoice, type SealedAuthority } from '../../payments/index.js';
import { CliError, EXIT, inputFile, println, str, type Command } from '../command.js';
import { progressReporter } from '../progress.js';
import { countOption } from './checkpoint.js';
import { counted } from '../../demo/format.js';
import { verdictLine } from '../pins.js';
import { LOG_BINDING_HELP, LOG_BINDING_OPTIONS } from './log-binding.js';

/** Which authority the bundle's genesis spec seals (read from its first line only; sealedAuthorityOf, PROTOCOL.md §16–§18). */
async function sealedAuthority(path: string): Promise<SealedAuthority> {
  const stream = createReadStream(path, { highWaterMark: 1 << 16 });
  try {
    for await (const { line } of splitLines(stream)) {
      // The one strict parser on the raw line: a duplicate "mandate" key is not read last-wins.
      const r = parseStrictJson(line);
      if (!r.ok) return undefined; // Not JSON in the one encoding: replay reports the chain error.
      const v = r.value as { spec?: unknown } | null;
      return typeof v !== 'object' || v === null ? undefined : sealedAuthorityOf(v.spec);
    }
  } catch {
    // Not JSON: replay reports the chain error.
  } finally {
    stream.destroy();
  }
  return undefined;
}

export const replayCommand: Command = {
  name: 'replay',
  summary: 'Re-derive every ruling of a sealed bundle from the bundle alone; report each divergence.',
  help: `Usage: tally replay <bundle.jsonl> [--ruler auto|intent|referee|payments|ap2|none] [--vkey <vkey> --checkpoint <file> [--log-key <vkey> | --log-identity <file>... [--log-proof <file>]]] [--root <hex>] [--session <hex>] [--size <n>] [--max <n>] [--unsealed] [--json]

Verifies the bundle (every rule of 'tally verify'), then drives a fresh engine
on an empty scratch store (a throwaway SQLite file under the OS temp directory,
removed afterwards: memory stays bounded however long the day) with the
recorded inputs — the genesis spec, every frame,
every turn body, the seal's artifacts — and compares each entry it writes with
the recorded one. A ruling the ruler does not reach again is reported with its
entry index (ruling-diverged), as is any other difference (entry-diverged) or
an input the engine refuses (rejected). Each divergence lists the fields that
differ, one a line: 'ruling.quota.cap: recorded "999999", re-derived "146"'.
--json gives per divergence "recorded" and "rederived" (the whole values) and
"changes" ([{path, recorded, rederived}], a side absent when it has no such
field); "expected" and "actual" repeat recorded and re-derived (the first
names, kept for compatibility, deprecated). A bundle whose rulings were edited
fails here even when every hash and the seal were recomputed.

A nonce first used in ANOTHER session cannot be re-derived offline: replay
takes it from the recorded ruling and lists it as an external fact (trusted,
not verified; replay that session to check it).

Options:
  --ruler <r>       the ruler the day was recorded with: intent (the intent
                    contract), referee (mandates, tickets, verdicts; recorded
                    judge evidence is re-verified, never re-asked), payments
                    (x402 payments over the referee, PROTOCOL.md §17), ap2 (an
                    AP2 open payment mandate or a VI credential, §16), none, or auto (default:
                    payments when the spec seals a payment policy, referee when
                    it seals a mandate, ap2 when it carries spec.ap2 or spec.vi, else intent)
  --vkey <vkey>     the engine's verifier key (name+keyid+base64, or a file of keys);
                    --key is its old spelling, accepted until the next release
  --checkpoint <f>  a signed checkpoint of the day, checked exactly as by
                    'tally verify --vkey --checkpoint' (signed by --vkey, names the
                    bundle's session, the bundle's first <size> entries have its
                    root) before the replay; the result says what it was pinned to
${LOG_BINDING_HELP}
  --root <hex>      pin the receipt root; --session <hex> and --size <n> likewise
  --max <n>         stop after n divergences (default 100)
  --unsealed        accept a bundle without a seal
  --json            print the result as JSON

Exit codes: 0 every ruling re-derived, 1 the bundle is invalid or replay diverged,
2 usage error, 3 file unreadable.`,
  renamedOptions: () => ({ key: 'vkey' }),
  options: {
    vkey: { type: 'string' },
    ruler: { type: 'string' },
    key: { type: 'string' },
    checkpoint: { type: 'string' },
    root: { type: 'string' },
    session: { type: 'string' },
    size: { type: 'string' },
    max: { type: 'string' },
    unsealed: { type: 'boolean' },
    json: { type: 'boolean' },
    ...LOG_BINDING_OPTIONS,
  },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("replay takes exactly one bundle path. Run 'tally replay --help'.");
    const ruler = str(values, 'ruler') ?? 'auto';
    if (!(RULERS as readonly string[]).includes(ruler)) throw new CliError(`--ruler must be one of ${RULERS.join(', ')}`);
    const pin: { sessionId?: string; size?: number; receiptRoot?: string } = {};
    for (const [opt, field] of [
      ['root', 'receiptRoot'],
      ['session', 'sessionId'],
    ] as const) {
      const v = str(values, opt);
      if (v === undefined) continue;
      if (!isDigestHex(v)) throw new CliError(`--${opt} must be 64 lowercase hex characters`);
      pin[field] = v;
    }
    const size = countOption(values, 'size');
    if (size !== undefined) pin.size = size;
    const max = countOption(values, 'max');
    const file = resolve(io.cwd, path);
    inputFile(file, io, 'the bundle');
    // --vkey/--checkpoint: the one checkpoint check `tally verify` runs; the replay is then held to the root it accepted.
    let pinnedTo: string | undefined;
    const replayPin: { sessionId?: string; size?: number; receiptRoot?: string } = { ...pin };
    if (values['vkey'] !== undefined || values['checkpoint'] !== undefined || values['log-key'] !== undefined || values['log-identity'] !== undefined || values['log-proof'] !== undefined) {
      const { checkAgainstCheckpoint } = await import('./verify-proof.js');
      const c = await checkAgainstCheckpoint(file, pin as ChainPin, values, io);
      if (typeof c === 'number') return c;
      pinnedTo = c.log === undefined ? c.pinnedTo : `${c.pinnedTo}, leaf ${c.log.index} of the engine log ${c.log.log.origin}`;
      replayPin.sessionId = c.result.summary.sessionId;
      replayPin.receiptRoot = c.result.summary.receiptRoot;
    }
    const authority = ruler === 'auto' ? await sealedAuthority(file) : undefined;
    // The one choice of ruler the grader's page makes too.
    const chosen = chooseReplayRuler(ruler as ReplayChoice, authority);
    const rulerOption: ReplayOptions['ruler'] = chosen.ruler;
    const json = values['json'] === true;
    // --json: stdout has the one result object and stderr nothing human (not even a progress bar).
    const progress = json ? { tick: () => {}, done: () => {} } : progressReporter(io, 'replaying');
    const r = await replayFile(file, {
      ruler: rulerOption,
      requireSealed: values['unsealed'] !== true,
      ...(Object.keys(replayPin).length === 0 ? {} : { pin: replayPin as ChainPin }),
      ...(max === undefined ? {} : { maxDivergences: max }),
      onEntry: (i) => progress.tick(i + 1, replayPin.size),
    });
    progress.done();
    if (json) {
      println(io.stdout, JSON.stringify({ ...r, ruler: chosen.name, ...(pinnedTo === undefined ? {} : { pinnedTo }) }));
      return r.ok ? EXIT.ok : EXIT.invalid;
    }
    if (r.ok) {
      {
        println(io.stdout, `replayed: ${counted(r.size, 'entry')}, ${counted(r.turns, 'turn')}; ${r.rulings === 0 ? 'no rulings to re-derive' : r.rulings === 1 ? 'the 1 ruling re-derived' : `all ${r.rulings} rulings re-derived`}${r.sealed ? '' : ' (NOT sealed)'}`);
        println(io.stdout, verdictLine(pin, pinnedTo));
        println(io.stdout, `session      ${r.sessionId}`);
        println(io.stdout, `receipt root ${r.receiptRoot}`);
        println(io.stdout, `ruler        ${chosen.name}`);
        for (const f of r.externalFacts) println(io.stdout, `external     entry ${f.index}: ${externalFactText(f)} (trusted, not verified)`);
      }
      return EXIT.ok;
    }
    if (r.stage === 'chain') {
      println(io.stderr, `invalid: entry ${r.index}: ${r.code}: ${r.message}`);
      return EXIT.invalid;
    }
    println(io.stderr, `diverged: ${r.divergences.length} entr${r.divergences.length === 1 ? 'y' : 'ies'} of session ${r.sessionId} not re-derived${r.stoppedAt === undefined ? '' : ` (stopped at entry ${r.stoppedAt})`}`);
    for (const d of r.divergences) {
      println(io.stderr, `entry ${d.index}: ${d.kind}: ${d.message}`);
      // What changed, field by field (the whole values are in --json as recorded / rederived).
      if (d.kind !== 'rejected') {
        for (const c of d.changes) println(io.stderr, `  ${changeLine(c)}`);
        if (d.changes.length >= FIELD_CHANGES_MAX) println(io.stderr, `  … (the first ${FIELD_CHANGES_MAX} changed fields; --json has both values whole)`);
      }
    }
    return EXIT.invalid;
  },
};
