/**
 * Grouped top-level help and shell completion, both made from the one command
 * table (src/cli/commands/index.ts). The bash script is sourced in a real bash
 * and asked to complete, as the shell does on <Tab>.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_GROUPS, COMMANDS } from '../../src/cli/commands/index.js';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-completion-'));

describe('grouped help', () => {
  it('tally --help lists every command once, under its group, groups in order', () => {
    const r = tally(['--help']);
    expect(r.code).toBe(0);
    const headings = COMMAND_GROUPS.map(([, title]) => r.stdout.indexOf(`\n${title}:\n`));
    expect(headings.every((i) => i > 0)).toBe(true);
    expect([...headings].sort((a, b) => a - b)).toEqual(headings);
    for (const c of COMMANDS) {
      const at = r.stdout.search(new RegExp(`^  ${c.name} +\\S`, 'm'));
      expect(at, c.name).toBeGreaterThan(0);
      const g = COMMAND_GROUPS.findIndex(([name]) => name === c.group);
      expect(at, `${c.name} under ${c.group}`).toBeGreaterThan(headings[g]!);
      if (g + 1 < headings.length) expect(at, `${c.name} under ${c.group}`).toBeLessThan(headings[g + 1]!);
    }
    expect(r.stdout).toMatch(/^Record a day:\n  demo +/m);
  });
});

describe('tally completion', () => {
  const script = join(dir, 'tally.bash');
  const complete = (words: string[]): string[] => {
    const r = spawnSync('bash', ['-c', `source ${script}; complete -p tally; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _tally; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8', cwd: dir });
    expect(r.status, r.stderr).toBe(0);
    const [spec, ...out] = r.stdout.trimEnd().split('\n');
    expect(spec).toBe('complete -o filenames -F _tally tally');
    return out.filter((l) => l !== '');
  };

  it('bash: sourced in bash, it completes commands, subcommands and options', () => {
    const r = tally(['completion', 'bash']);
    expect(r.code, r.stderr).toBe(0);
    writeFileSync(script, r.stdout);
    expect(complete(['tally', 'wit'])).toEqual(['witness']);
    expect(complete(['tally', 'verify']).sort()).toEqual(['verify', 'verify-evidence', 'verify-proof']);
    expect(complete(['tally', '']).sort()).toEqual(COMMANDS.map((c) => c.name).sort());
    expect(complete(['tally', 'witness', 'k'])).toEqual(['keygen']);
    expect(complete(['tally', 'view', '--o'])).toEqual(['--out', '--open']);
    expect(complete(['tally', 'replay', '--js'])).toEqual(['--json']);
    writeFileSync(join(dir, 'day.jsonl'), '');
    expect(complete(['tally', 'verify', 'da'])).toEqual(['day.jsonl']);
  });

  it('zsh and fish scripts name every command and its subcommands', () => {
    const zsh = tally(['completion', 'zsh']).stdout;
    const fish = tally(['completion', 'fish']).stdout;
    expect(zsh).toMatch(/^#compdef tally\n/);
    expect(zsh).toContain('compdef _tally tally');
    for (const c of COMMANDS) {
      expect(zsh, c.name).toContain(`'${c.name}:`);
      expect(fish, c.name).toContain(`-n __fish_use_subcommand -a ${c.name} -d `);
      for (const s of c.subcommands ?? []) expect(fish).toMatch(new RegExp(`__fish_seen_subcommand_from ${c.name}' -a '[^']*\\b${s}\\b`));
    }
    expect(zsh).toContain("'\\''"); // an apostrophe in a summary is quoted, not a syntax error
  });

  it('an unknown shell is a usage error', () => {
    expect(tally(['completion', 'powershell']).code).toBe(2);
    expect(tally(['completion']).code).toBe(2);
  });
});
