/**
 * The genesis spec members that put a session under an AP2 open payment
 * mandate or a Verifiable Intent credential (docs/PROTOCOL.md §16). Their own
 * file, importing nothing: the choice of a replay ruler (payments/replay-ruler.ts)
 * reads them in the browser page, which cannot load the SD-JWT verifiers.
 */

/** The session spec member that makes a session AP2-governed. */
export const AP2_SPEC_KEY = 'ap2';
/** The session spec member that puts a session under a VI credential. */
export const VI_SPEC_KEY = 'vi';
