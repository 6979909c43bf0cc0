/**
 * Every `tally` command, in the order `tally --help` lists them. Each entry
 * loads its module only when the command runs, so `tally verify` does not pay
 * for the server, the MCP SDK or viem. tests/cli/registry.test.ts checks that
 * every name and summary here equals the loaded command's.
 */
import type { Command } from '../command.js';

/** A command known by name and summary, loaded on demand. */
export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<Command>;
}

export const COMMANDS: readonly CommandEntry[] = [
  { name: 'demo', summary: 'Record, seal, verify, replay and prove a whole simulated agent-day (what `npm start` runs).', load: async () => (await import('./demo.js')).demoCommand },
  { name: 'inspect', summary: 'Print a readable timeline of a bundle: frames, turns, rulings, diagnostics, the seal.', load: async () => (await import('./inspect.js')).inspectCommand },
  { name: 'verify', summary: 'Verify a sealed bundle offline (every hash, link, frame root, the Merkle root and the seal).', load: async () => (await import('./verify.js')).verifyCommand },
  { name: 'checkpoint', summary: "Sign a C2SP checkpoint of a session with the engine key, or print the engine's verifier key.", load: async () => (await import('./checkpoint.js')).checkpointCommand },
  { name: 'export', summary: 'Export a session from any store: the bundle, the seal receipt, a signed checkpoint and (optionally) every turn receipt.', load: async () => (await import('./export.js')).exportCommand },
  { name: 'prove', summary: "Write a single-turn receipt: one entry of a bundle, its inclusion proof and the engine's signed checkpoint (signs nothing).", load: async () => (await import('./prove.js')).proveCommand },
  { name: 'verify-proof', summary: "Verify a single-turn receipt offline with the engine's verifier key alone.", load: async () => (await import('./verify-proof.js')).verifyProofCommand },
  { name: 'view', summary: "Write the grader's desk as one offline HTML file with a bundle (and its receipt and key) embedded.", load: async () => (await import('./view.js')).viewCommand },
  { name: 'consistency', summary: 'Prove or verify that a session only grew between two signed checkpoints (RFC 9162 consistency).', load: async () => (await import('./consistency.js')).consistencyCommand },
  { name: 'monitor', summary: "Follow a serving engine's checkpoints, verify each consistency proof, report an equivocation with evidence.", load: async () => (await import('./monitor.js')).monitorCommand },
  { name: 'replay', summary: 'Re-derive every ruling of a sealed bundle from the bundle alone; report each divergence.', load: async () => (await import('./replay.js')).replayCommand },
  { name: 'grade', summary: 'Sign or verify a certified grade: a grader signature pinning one exact sealed transcript.', load: async () => (await import('./grade.js')).gradeCommand },
  { name: 'witness', summary: 'Run a C2SP witness: cosign checkpoints only when consistent with what it cosigned before (keygen, trust, serve).', load: async () => (await import('./witness.js')).witnessCommand },
  { name: 'tiles', summary: 'Write the engine log as C2SP tlog-tiles files (checkpoint, tiles, entry bundles) for any static host.', load: async () => (await import('./tiles.js')).tilesCommand },
  { name: 'serve', summary: 'Serve the wire verbs over HTTP (JSON-RPC 2.0 at POST /rpc, GETs for graders) behind bearer tokens.', load: async () => (await import('./serve.js')).serveCommand },
  { name: 'judge', summary: 'Run a judge service that signs its own verdicts (OpenAI-compatible, wrapping a model endpoint or the local rules model).', load: async () => (await import('./judge.js')).judgeCommand },
  { name: 'mcp', summary: 'Serve the wire verbs (and verify) as Model Context Protocol tools on stdio.', load: async () => (await import('./mcp.js')).mcpCommand },
  { name: 'open', summary: 'Open a session from a spec (the same spec is always the same session) and print its id.', load: async () => (await import('./open.js')).openCommand },
  { name: 'frame', summary: 'Deliver a frame: the OPEN frame (ordinal -1) or the next wake.', load: async () => (await import('./frame.js')).frameCommand },
  { name: 'turn', summary: 'Answer the pending frame with authored bytes or a stand-down.', load: async () => (await import('./turn.js')).turnCommand },
  { name: 'finalize', summary: 'Seal a session and print its receipt (size, receipt root, head).', load: async () => (await import('./finalize.js')).finalizeCommand },
  { name: 'events', summary: "List a session's entries after a cursor (to follow or resume a day).", load: async () => (await import('./events.js')).eventsCommand },
  { name: 'describe', summary: "Show a session's phase, head, root, pending frame and counts (or list the sessions).", load: async () => (await import('./describe.js')).describeCommand },
  { name: 'key', summary: 'Create the engine signing key (tally key new): the one explicit act that makes an engine identity.', load: async () => (await import('./key.js')).keyCommand },
  { name: 'intent', summary: "Sign an Intent with a key file (or a public test key), print its canonical payload and hash, verify its signature, or print a key's address.", load: async () => (await import('./intent.js')).intentCommand },
  { name: 'mandate', summary: "Sign a session spec's mandate as its principal (EIP-712 or EIP-191), verify it, or print its typed data for a wallet.", load: async () => (await import('./mandate.js')).mandateCommand },
  { name: 'codes', summary: 'List or explain (tally codes <code>) every ruling, refusal, diagnostic, verification and replay code: when it happens, how to fix it.', load: async () => (await import('./codes.js')).codesCommand },
];
