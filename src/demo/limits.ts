/** Bounds of a demo day (a light module: `tally demo --help` reads them without loading the demo). */

/** Most wakes one demo day may have. */
export const MAX_DEMO_WAKES = 1_000_000;
