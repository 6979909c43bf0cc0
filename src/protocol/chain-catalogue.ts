/**
 * When each bundle verification code ({@link ChainErrorCode}) happens and what
 * to do about it: the one copy of these texts (`tally codes` prints them). A
 * `Record` over the union, so a new code without an entry breaks the build.
 */
import type { ChainErrorCode } from './chain.js';

/** One verification code's explanation. */
export interface ChainErrorEntry {
  readonly when: string;
  readonly fix: string;
}

export const CHAIN_ERROR_CATALOGUE: Readonly<Record<ChainErrorCode, ChainErrorEntry>> = Object.freeze({
  empty: { when: 'The bundle has no entries at all.', fix: 'Export the session again (tally export); an empty file is not a day.' },
  'too-large': { when: 'A line is longer than the limit a bundle line may have.', fix: 'The bundle was not written by Tally or was appended to; export it again from the store.' },
  'not-utf8': { when: 'A line is not valid UTF-8.', fix: 'Copy the bundle as bytes (no re-encoding by an editor or a transfer in text mode).' },
  'not-json': { when: 'A line is not JSON in the one strict encoding (a BOM, a duplicate key, a lone surrogate, trailing data, a syntax error).', fix: 'Do not edit bundles by hand; export the session again.' },
  'not-canonical': { when: 'A line parses but is not the canonical JSON of its entry (keys out of order, extra spaces, another number spelling).', fix: 'Bytes are accepted only in their one canonical encoding: export the session again instead of reformatting it.' },
  'bad-structure': { when: 'A line is canonical JSON but not an entry: a missing, extra or mistyped field.', fix: 'The file is not a Tally bundle or was edited; export the session again.' },
  'not-genesis': { when: 'The first entry is not the genesis entry that opens the session.', fix: 'A bundle starts at its genesis: do not cut lines off its start.' },
  'wrong-session': { when: 'An entry names another session than the genesis did (two bundles were concatenated).', fix: 'Verify each session\'s bundle on its own.' },
  'broken-link': { when: "An entry's parent hash is not the hash of the entry before it: one of the two was changed, or a line was removed or inserted.", fix: 'Look at both entries the message names; the bundle was altered after it was written.' },
  'unexpected-entry': { when: 'An entry arrives where the protocol allows none: a second genesis, a turn with no frame to answer, a frame or the seal while a frame is unanswered.', fix: 'The chain was altered (lines reordered or removed); export it again.' },
  'bad-ordinal': { when: 'A frame does not carry the next ordinal, or a turn does not answer the pending frame\'s ordinal.', fix: 'Lines were reordered, removed or edited; export the session again.' },
  'time-regressed': { when: 'A frame\'s time is before the previous frame\'s: a day\'s clock never runs backwards.', fix: 'The frame time was edited; export the session again.' },
  'bad-frame-root': { when: "A frame's root does not match its content, or a turn names another frame root than the frame it answers.", fix: 'The frame content or root was edited; export the session again.' },
  'bad-authored-bytes': { when: "A turn's authored bytes are not valid (not the base64 of what the agent wrote).", fix: 'The turn was edited; export the session again.' },
  'bad-authored-hash': { when: "A turn's declared hash of the authored bytes differs from the hash recomputed from them.", fix: 'The authored bytes or their hash were edited; export the session again.' },
  'bad-seal-size': { when: 'The finalize seal declares another size than the number of entries before it.', fix: 'Entries were added or removed before the seal; export the session again.' },
  'bad-seal-root': { when: "The finalize seal's receipt root differs from the Merkle root of the entries before it.", fix: 'An entry before the seal was changed; export the session again.' },
  'after-seal': { when: 'An entry follows the finalize seal: a sealed day takes nothing new.', fix: 'Remove what was appended; the seal is the last line.' },
  'not-sealed': { when: 'The bundle ends before a finalize seal.', fix: 'Seal the session (tally finalize) and export it, or pass --unsealed to check an open day as far as it goes.' },
  'missing-newline': { when: 'The last line does not end with a newline (the file was cut short).', fix: 'Copy the whole file again; every entry line ends with \\n.' },
  'pin-mismatch': { when: 'The bundle is self-consistent but not the day pinned: its session, size or receipt root differs from --session, --size, --root or the signed checkpoint.', fix: 'Check that you were given the bundle the receipt is for; a different day verifies only against its own pins.' },
});
