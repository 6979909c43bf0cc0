/**
 * Peak resident memory of this process, for the bench's children.
 */
import { readFileSync } from 'node:fs';

/**
 * Peak RSS of THIS process image in KiB: Linux's VmHWM (getrusage's maxrss
 * survives exec and would report the parent's peak); elsewhere, getrusage.
 */
export function peakRssKb(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS;
}
