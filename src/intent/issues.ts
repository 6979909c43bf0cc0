/** Turns a zod error into one short, bounded, human line (never echoes large input). */
import type { z } from 'zod';

const MAX_MESSAGE = 200;

type Issue = z.core.$ZodIssue;

function mostSpecific(issue: Issue, path: readonly PropertyKey[]): { issue: Issue; path: readonly PropertyKey[] } {
  const here = [...path, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // Prefer a branch that failed on content over one that failed on type.
    const branches = issue.errors.flat();
    const chosen = branches.find((b) => b.code !== 'invalid_type') ?? branches[0];
    if (chosen !== undefined) return mostSpecific(chosen, here);
  }
  return { issue, path: here };
}

/**
 * `"<path>: <message>"` for the first issue of a zod error, at most 200 characters.
 *
 * @example
 * describeFirstIssue(intentSchema.safeParse({}).error!); // 'action: Invalid discriminator value…'
 */
export function describeFirstIssue(error: z.ZodError): string {
  const first = error.issues[0];
  if (first === undefined) return 'invalid input';
  const { issue, path } = mostSpecific(first, []);
  const where = path.length === 0 ? '(root)' : path.map((p) => String(p)).join('.');
  const line = `${where}: ${issue.message}`;
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 1)}…` : line;
}
