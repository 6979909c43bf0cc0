/**
 * Peak resident memory of this process, for the bench's children.
 */
import { readFileSync } from 'node:fs';

/**
 * Peak RSS of THIS process image (or of process `pid`) in KiB: Linux's VmHWM (getrusage's maxrss
 * survives exec and would report the parent's peak); elsewhere, getrusage.
 */
export function peakRssKb(pid?: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid ?? 'self'}/status`, 'utf8'));
    if (m) return Number(m[1]);
  } catch {
    // not Linux
  }
  return pid === undefined ? process.resourceUsage().maxRSS : 0;
}
