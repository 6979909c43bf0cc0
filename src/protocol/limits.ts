/** Size limits of the session protocol; inputs beyond them are `malformed-entry`. */
export const LIMITS = {
  /** Largest canonical entry, in bytes. */
  entryBytes: 1_048_576,
  /** Largest authored turn body, in bytes (before base64). */
  authoredBytes: 262_144,
  /** Largest canonical session spec, in bytes. */
  specBytes: 65_536,
  /** Longest session name, in UTF-16 code units. */
  nameLength: 200,
  /** Largest ordinal a wake may have (keeps ordinals safe integers with room). */
  maxOrdinal: 2 ** 40,
} as const;

/**
 * The most entries one ranged bundle request answers
 * (`GET /sessions/:id/bundle?from=N&limit=M`, docs/WIRE.md): the server caps
 * a larger `limit` to it, and a follower that receives fewer knows it has
 * caught up.
 */
export const BUNDLE_RANGE_MAX = 10_000;
