/** `tally intent sign|hash|verify` from outside: an Intent signed from the shell verifies, hashes stably, and is ruled on. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-cli-intent-'));
const ALPHA = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'; // Anvil account 0, the public test key test:alpha
const unsigned = { action: 'open', agent_id: 'alpha', market: 'BTC-PERP', side: 'long', size: '1', leverage: '3', max_slippage: '0.005', nonce: '1', ttl: '2030-01-01T00:00:00Z' };

describe('tally intent (from outside)', () => {
  it('hash prints the canonical payload and hash; sign with a key file or a test key; verify recovers and pins the signer', () => {
    writeFileSync(join(dir, 'intent.json'), JSON.stringify(unsigned));
    const h = tally(['intent', 'hash', 'intent.json'], { cwd: dir });
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('payload      {"action":"open","agent_id":"alpha","leverage":"3","market":"BTC-PERP","max_slippage":"0.005","nonce":"1","side":"long","size":"1","ttl":"2030-01-01T00:00:00.000Z"}');
    const hash = /intent hash  (0x[0-9a-f]{64})/.exec(h.stdout)![1]!;

    const byName = tally(['intent', 'sign', 'intent.json', '--key', 'test:alpha'], { cwd: dir });
    expect(byName.code, byName.stderr).toBe(0);
    writeFileSync(join(dir, 'alpha.key'), '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80\n');
    const byFile = tally(['intent', 'sign', 'intent.json', '--key', 'alpha.key', '--out', 'signed.json'], { cwd: dir });
    expect(byFile.code, byFile.stderr).toBe(0);
    expect(byFile.stdout).toContain(`signed Intent (intent hash ${hash}) written to`);

    const v = tally(['intent', 'verify', 'signed.json', '--signer', ALPHA], { cwd: dir });
    expect(v.code).toBe(0);
    expect(v.stdout).toBe(`valid: signed by ${ALPHA}\nintent hash  ${hash}\n`);
    expect(tally(['intent', 'verify', '-'], { cwd: dir, input: byName.stdout }).stdout).toContain(`valid: signed by ${ALPHA} (unpinned`);
    const wrong = tally(['intent', 'verify', 'signed.json', '--signer', '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'], { cwd: dir });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`invalid: signed by ${ALPHA}, not 0x70997970C51812dc3A010C7d01b50e0d17dc79C8`);
  });

  it('refuses bad input with the right exit code', () => {
    expect(tally(['intent', 'sign', JSON.stringify(unsigned), '--key', '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'], { cwd: dir }).code).toBe(2);
    expect(tally(['intent', 'sign', JSON.stringify(unsigned), '--key', 'test:nobody'], { cwd: dir }).code).toBe(2);
    expect(tally(['intent', 'sign', JSON.stringify(unsigned), '--key', 'missing.key'], { cwd: dir }).code).toBe(3);
    const bad = tally(['intent', 'hash', '{"action":"fly"}'], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^invalid: Intent does not match the Intent schema/);
    expect(tally(['intent', 'verify', JSON.stringify(unsigned)], { cwd: dir }).code).toBe(1);
    expect(tally(['intent', 'frobnicate', 'x'], { cwd: dir }).code).toBe(2);
  });
});
