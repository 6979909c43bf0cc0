/**
 * Every `tally` command, grouped as `tally --help` lists them (in this order within a group). Each entry
 * loads its module only when the command runs, so `tally verify` does not pay
 * for the server, the MCP SDK or viem. tests/cli/registry.test.ts checks that
 * every name and summary here equals the loaded command's.
 */
import type { Command } from '../command.js';

/** The groups `tally --help` lists commands under, in order, with their headings. */
export const COMMAND_GROUPS = [
  ['record', 'Record a day'],
  ['verify', 'Verify a day'],
  ['serve', 'Serve'],
  ['keys', 'Keys and signatures'],
  ['inspect', 'Inspect'],
  ['shell', 'Shell'],
] as const;

/** A group's name. */
export type CommandGroup = (typeof COMMAND_GROUPS)[number][0];

/** A command known by name and summary, loaded on demand. */
export interface CommandEntry {
  readonly name: string;
  readonly group: CommandGroup;
  /** The words its first positional takes (`tally witness keygen`), for shell completion. */
  readonly subcommands?: readonly string[];
  readonly summary: string;
  load(): Promise<Command>;
}

export const COMMANDS: readonly CommandEntry[] = [
  { name: 'demo', group: 'record', summary: 'Record, seal, verify, replay and prove a whole simulated agent-day (what `npm start` runs).', load: async () => (await import('./demo.js')).demoCommand },
  { name: 'inspect', group: 'inspect', summary: 'Print a readable timeline of a bundle: frames, turns, rulings, diagnostics, the seal.', load: async () => (await import('./inspect.js')).inspectCommand },
  { name: 'verify', group: 'verify', summary: 'Verify a sealed bundle offline (every hash, link, frame root, the Merkle root and the seal).', load: async () => (await import('./verify.js')).verifyCommand },
  { name: 'checkpoint', group: 'keys', summary: "Sign a C2SP checkpoint of a session with the engine key, or print the engine's verifier key.", load: async () => (await import('./checkpoint.js')).checkpointCommand },
  { name: 'export', group: 'record', summary: 'Export a session from any store: the bundle, the seal receipt, a signed checkpoint and (optionally) every turn receipt.', load: async () => (await import('./export.js')).exportCommand },
  { name: 'prove', group: 'record', summary: "Write a single-turn receipt: one entry of a bundle, its inclusion proof and the engine's signed checkpoint (signs nothing).", load: async () => (await import('./prove.js')).proveCommand },
  { name: 'verify-proof', group: 'verify', summary: "Verify a single-turn receipt offline with the engine's verifier key alone.", load: async () => (await import('./verify-proof.js')).verifyProofCommand },
  { name: 'evidence', group: 'record', summary: 'Write the dispute evidence pack of one x402 payment or one AP2 transaction, each entry with its inclusion proof under the checkpoint.', load: async () => (await import('./evidence.js')).evidenceCommand },
  { name: 'verify-evidence', group: 'verify', summary: "Verify an x402 payment's or an AP2 transaction's evidence pack offline with the engine's verifier key alone, and name its dispute reasons or steps.", load: async () => (await import('./evidence.js')).verifyEvidenceCommand },
  { name: 'view', group: 'inspect', summary: "Write the grader's desk as one offline HTML file with a bundle (and its receipt and key) embedded.", load: async () => (await import('./view.js')).viewCommand },
  { name: 'consistency', group: 'verify', subcommands: ['prove', 'verify'], summary: 'Prove or verify that a session only grew between two signed checkpoints (RFC 9162 consistency).', load: async () => (await import('./consistency.js')).consistencyCommand },
  { name: 'monitor', group: 'verify', summary: "Follow a serving engine's checkpoints, verify each consistency proof, report an equivocation with evidence.", load: async () => (await import('./monitor.js')).monitorCommand },
  { name: 'replay', group: 'verify', summary: 'Re-derive every ruling of a sealed bundle from the bundle alone; report each divergence.', load: async () => (await import('./replay.js')).replayCommand },
  { name: 'grade', group: 'verify', subcommands: ['sign', 'verify', 'key'], summary: 'Sign or verify a certified grade: a grader signature pinning one exact sealed transcript.', load: async () => (await import('./grade.js')).gradeCommand },
  { name: 'witness', group: 'serve', subcommands: ['keygen', 'print-key', 'trust', 'serve'], summary: 'Run a C2SP witness: cosign checkpoints only when consistent with what it cosigned before (keygen, trust, serve).', load: async () => (await import('./witness.js')).witnessCommand },
  { name: 'log', group: 'serve', subcommands: ['identity'], summary: "Write the engine log's signed identity document graders pin (origin, key, tiles, witness policy, rate, validity), or a new shard's that succeeds it.", load: async () => (await import('./log.js')).logCommand },
  { name: 'tiles', group: 'serve', subcommands: ['export'], summary: "Write the engine log, or one session's tree, as C2SP tlog-tiles files (checkpoint, tiles, entry bundles) for any static host.", load: async () => (await import('./tiles.js')).tilesCommand },
  { name: 'serve', group: 'serve', summary: 'Serve the wire verbs over HTTP (JSON-RPC 2.0 at POST /rpc, GETs for graders) behind bearer tokens.', load: async () => (await import('./serve.js')).serveCommand },
  { name: 'judge', group: 'serve', subcommands: ['serve', 'keygen'], summary: 'Run a judge service that signs its own verdicts (OpenAI-compatible, wrapping a model endpoint or the local rules model), or create its key (keygen).', load: async () => (await import('./judge.js')).judgeCommand },
  { name: 'mcp', group: 'serve', subcommands: ['proxy'], summary: 'Serve the wire verbs (and verify) as Model Context Protocol tools on stdio.', load: async () => (await import('./mcp.js')).mcpCommand },
  { name: 'open', group: 'record', summary: 'Open a session from a spec (the same spec is always the same session) and print its id.', load: async () => (await import('./open.js')).openCommand },
  { name: 'frame', group: 'record', summary: 'Deliver a frame: the OPEN frame (ordinal -1) or the next wake.', load: async () => (await import('./frame.js')).frameCommand },
  { name: 'turn', group: 'record', summary: 'Answer the pending frame with authored bytes or a stand-down.', load: async () => (await import('./turn.js')).turnCommand },
  { name: 'finalize', group: 'record', summary: 'Seal a session and print its receipt (size, receipt root, head).', load: async () => (await import('./finalize.js')).finalizeCommand },
  { name: 'events', group: 'inspect', summary: "List a session's entries after a cursor (to follow or resume a day).", load: async () => (await import('./events.js')).eventsCommand },
  { name: 'describe', group: 'inspect', summary: "Show a session's phase, head, root, pending frame and counts (or list the sessions).", load: async () => (await import('./describe.js')).describeCommand },
  { name: 'key', group: 'keys', subcommands: ['new'], summary: 'Create the engine signing key (tally key new): the one explicit act that makes an engine identity.', load: async () => (await import('./key.js')).keyCommand },
  { name: 'intent', group: 'keys', subcommands: ['sign', 'hash', 'verify', 'address'], summary: "Sign an Intent with a key file (or a public test key), print its canonical payload and hash, verify its signature, or print a key's address.", load: async () => (await import('./intent.js')).intentCommand },
  { name: 'mandate', group: 'keys', subcommands: ['sign', 'verify', 'typed-data'], summary: "Sign a session spec's mandate as its principal (EIP-712 or EIP-191), verify it, or print its typed data for a wallet.", load: async () => (await import('./mandate.js')).mandateCommand },
  { name: 'operator', group: 'serve', subcommands: ['acknowledge-failover'], summary: "Operator acts on a store: acknowledge a failover after checking it holds everything the engine signed and witnesses cosigned.", load: async () => (await import('./operator.js')).operatorCommand },
  { name: 'codes', group: 'inspect', summary: 'List or explain (tally codes <code>) every ruling, refusal, diagnostic, verification and replay code: when it happens, how to fix it.', load: async () => (await import('./codes.js')).codesCommand },
  { name: 'completion', group: 'shell', subcommands: ['bash', 'zsh', 'fish'], summary: 'Print a shell completion script (bash, zsh or fish) made from this command table.', load: async () => (await import('./completion.js')).completionCommand(COMMANDS) },
];
