/**
 * The x402 desk demo (`tally demo --x402`), loaded on use. Its chain and x402 servers need
 * packages that are optional peer dependencies of agent-tally (about 86 MB installed, which
 * every install would otherwise carry): {@link loadX402Demo} imports the demo and, when one of
 * them is missing, throws one typed error (`TALLY_DEMO_X402_DEPS`) naming the exact command that
 * installs them.
 */
import { TallyError } from '../protocol/index.js';
import { edrBinaryPackage } from './chain.js';

/** The packages `tally demo --x402` needs beyond agent-tally's own dependencies, as `npm install` takes them. */
export const X402_DEMO_PACKAGES = Object.freeze(['hardhat@~3.18.0', '@x402/core@~2.27.0', '@x402/evm@~2.27.0', '@x402/express@~2.27.0', '@x402/fetch@~2.27.0', 'express@^5.1.0']);

/** The one line that installs them (with this platform's EDR binary). */
export const X402_DEMO_INSTALL = `npm install ${[...X402_DEMO_PACKAGES, edrBinaryPackage()].join(' ')}`;

const names = X402_DEMO_PACKAGES.map((p) => p.slice(0, p.lastIndexOf('@')));

/** Which of the demo's optional packages `e` failed to find (hardhat when the chain's own lookup failed), else undefined. */
function missingPackage(e: unknown): string | undefined {
  const err = e as { code?: unknown; message?: unknown } | undefined;
  if (err?.code === 'TALLY_DEMO_X402_DEPS') return 'hardhat';
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  // Node: "Cannot find package 'express' imported from …" (a subpath import names its package).
  const message = String(err.message);
  return names.find((n) => message.includes(`'${n}'`) || message.includes(`'${n}/`));
}

/** The x402 demo's runner; a typed error naming what to install when a package it needs is missing. */
export async function loadX402Demo(): Promise<typeof import('./run.js')> {
  try {
    const run = await import('./run.js');
    // The chain child loads hardhat itself: find it now, so a missing one is the same one message.
    (await import('./chain.js')).hardhatHre();
    return run;
  } catch (e) {
    const missing = missingPackage(e);
    if (missing === undefined) throw e;
    throw new TallyError('TALLY_DEMO_X402_DEPS', `tally demo --x402 needs ${missing} and the x402 packages, which are not installed here. Install them with: ${X402_DEMO_INSTALL}`, { cause: e });
  }
}

export { edrBinaryPackage };
export type { X402DemoOptions, X402DemoReport } from './run.js';
