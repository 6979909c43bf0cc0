/**
 * `tally completion bash|zsh|fish`: a completion script generated from the
 * command table (names, subcommands, every command's options), so it never
 * lists a command or an option the CLI does not have.
 */
import { CliError, println, type Command } from '../command.js';
import type { CommandEntry } from './index.js';

/** One command as completion sees it. */
interface Completable {
  readonly name: string;
  readonly summary: string;
  readonly subcommands: readonly string[];
  /** Every option, spelled `--name`, with --json and --help. */
  readonly options: readonly string[];
}

async function table(commands: readonly CommandEntry[]): Promise<Completable[]> {
  return Promise.all(
    commands.map(async (c) => {
      const cmd = await c.load();
      const options = [...new Set([...Object.keys(cmd.options), 'json', 'help'])].map((o) => `--${o}`);
      return { name: c.name, summary: c.summary, subcommands: c.subcommands ?? [], options };
    }),
  );
}

/** A shell single-quoted word (the same rule in bash, zsh and fish). */
function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function bash(cmds: readonly Completable[]): string {
  const cases = cmds.map((c) => `    ${c.name}) opts=${q(c.options.join(' '))}; subs=${q(c.subcommands.join(' '))} ;;`);
  return `# tally completion for bash: eval "$(npx tally completion bash)" (or save it under bash-completion's completions/)
_tally() {
  local cur=\${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W ${q(cmds.map((c) => c.name).join(' '))} -- "$cur") )
    return
  fi
  local opts='' subs=''
  case "\${COMP_WORDS[1]}" in
${cases.join('\n')}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then
    COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
  else
    COMPREPLY=( $(compgen -f -- "$cur") )
  fi
}
complete -o filenames -F _tally tally
`;
}

function zsh(cmds: readonly Completable[]): string {
  const described = cmds.map((c) => `    ${q(`${c.name}:${c.summary}`)}`);
  const cases = cmds.map((c) => `    ${c.name}) opts=(${c.options.join(' ')}); subs=(${c.subcommands.join(' ')}) ;;`);
  return `#compdef tally
# tally completion for zsh: save as _tally in a directory on $fpath (or: source <(npx tally completion zsh))
_tally() {
  local -a cmds opts subs
  cmds=(
${described.join('\n')}
  )
  if (( CURRENT == 2 )); then
    _describe 'tally command' cmds
    return
  fi
  case $words[2] in
${cases.join('\n')}
  esac
  if [[ $PREFIX == -* ]]; then
    compadd -- $opts
  elif (( CURRENT == 3 && $#subs > 0 )); then
    compadd -- $subs
  else
    _files
  fi
}
compdef _tally tally
`;
}

function fish(cmds: readonly Completable[]): string {
  const lines = ['# tally completion for fish: npx tally completion fish > ~/.config/fish/completions/tally.fish', 'complete -c tally -f'];
  for (const c of cmds) lines.push(`complete -c tally -n __fish_use_subcommand -a ${c.name} -d ${q(c.summary)}`);
  for (const c of cmds) {
    const seen = `'__fish_seen_subcommand_from ${c.name}'`;
    if (c.subcommands.length > 0) lines.push(`complete -c tally -n ${seen} -a ${q(c.subcommands.join(' '))}`);
    for (const o of c.options) lines.push(`complete -c tally -n ${seen} -l ${o.slice(2)}`);
    lines.push(`complete -c tally -n ${seen} -F`);
  }
  return lines.join('\n') + '\n';
}

const SHELLS = { bash, zsh, fish } as const;

/** The completion command over `commands` (the index passes its table: this module does not import it back). */
export const completionCommand = (commands: readonly CommandEntry[]): Command => ({
  name: 'completion',
  summary: 'Print a shell completion script (bash, zsh or fish) made from this command table.',
  help: `Usage: tally completion bash|zsh|fish

Prints a completion script for the shell: it completes command names, a
command's subcommands (tally witness keygen) and its options. Made from the
same table as 'tally --help', so it lists exactly the commands there are.

  bash   eval "$(npx tally completion bash)" in ~/.bashrc
  zsh    npx tally completion zsh > "\${fpath[1]}/_tally"
  fish   npx tally completion fish > ~/.config/fish/completions/tally.fish

The scripts complete the word 'tally' (on PATH after 'npm link' or a global install).

Exit codes: 0 printed, 2 usage error.`,
  options: {},
  async run({ positionals }, io) {
    const shell = positionals[0];
    if (positionals.length !== 1 || !(shell! in SHELLS)) throw new CliError("usage: tally completion bash|zsh|fish (run 'tally completion --help')");
    println(io.stdout, SHELLS[shell as keyof typeof SHELLS](await table(commands)).trimEnd());
    return 0;
  },
});
