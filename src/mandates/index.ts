/**
 * AP2 v0.2 mandates (RFC 9901 SD-JWT credentials) as the authority of a day:
 * open mandates verified offline, closed mandates (KB-JWT) against them,
 * constraints evaluated against a derived history. See PROTOCOL.md §16.
 */
export * from './codes.js';
export * from './constraints.js';
export * from './currency.js';
export * from './buckets.js';
export * from './sdjwt.js';
export * from './open.js';
export * from './closed.js';
export * from './ruler.js';
