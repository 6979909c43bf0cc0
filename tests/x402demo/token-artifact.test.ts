/**
 * The token `tally demo --x402` deploys is the compiled artifact shipped in
 * src/x402demo/token-artifact.ts, so no Solidity is compiled at demo time. This compiles
 * contracts/TallyUSD.sol with the solc of package.json and checks the shipped module equals the
 * generator's output byte for byte (regenerate: node scripts/token-artifact.mjs >
 * src/x402demo/token-artifact.ts); an edit of the source is found.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { tokenArtifactModule } from '../../scripts/token-artifact.mjs';

const root = resolve(import.meta.dirname, '../..');
const make = tokenArtifactModule as (source?: string) => string;

describe('the shipped token artifact', () => {
  it('equals solc 0.8.37 compiling contracts/TallyUSD.sol', () => {
    const shipped = readFileSync(resolve(root, 'src/x402demo/token-artifact.ts'), 'utf8');
    expect(shipped).toContain('0.8.37+commit');
    expect(make()).toBe(shipped);
  }, 120_000);

  it('differs when the source differs (the check bites)', () => {
    const source = readFileSync(resolve(root, 'contracts/TallyUSD.sol'), 'utf8');
    const edited = source.replace(/string public name;/, 'string public name; uint256 public extra;');
    expect(edited).not.toBe(source);
    expect(make(edited)).not.toBe(make());
  }, 120_000);
});
