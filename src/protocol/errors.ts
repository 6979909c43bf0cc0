/**
 * The one error base class of Tally. Thrown errors are for misuse and I/O;
 * expected rejections (diagnostics, ruling codes) are returned as results.
 *
 * Every subclass carries a stable, machine-readable `code` that never changes
 * once published; `shortMessage` is for humans and may be reworded.
 */
export class TallyError extends Error {
  /** Stable machine-readable identifier, e.g. `TALLY_CANONICAL_UNSAFE_INTEGER`. */
  readonly code: string;
  /** One-line human summary without details. */
  readonly shortMessage: string;
  /** Optional extra context (where, what was expected). */
  readonly details: string | undefined;

  constructor(code: string, shortMessage: string, options: { details?: string; cause?: unknown } = {}) {
    super(options.details === undefined ? shortMessage : `${shortMessage}\n\nDetails: ${options.details}`, {
      cause: options.cause,
    });
    this.name = 'TallyError';
    this.code = code;
    this.shortMessage = shortMessage;
    this.details = options.details;
  }
}
