/**
 * Shell completion scripts generated from the live commander tree: every
 * command, subcommand and option the program has when the script is asked
 * for, so commands added later complete without touching this file.
 * bash is the base; zsh loads the same function through bashcompinit; fish
 * gets native `complete` lines. Loaded only by `agyctl completion`.
 */
import type { Command, Option } from 'commander';
import { PROFILE_IDS } from '../profiles/choose.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface OptionInfo {
  names: string[];
  takesValue: boolean;
  /** The value is a file or directory (`<dir>`, `<file>`). */
  path: boolean;
  description: string;
}

interface CommandInfo {
  /** 'settings set-auth'; '' for the program. */
  path: string;
  subs: Array<{ name: string; description: string }>;
  options: OptionInfo[];
}

/** Values offered after an option, by long name. */
const VALUES: Readonly<Record<string, readonly string[]>> = { '--profile': PROFILE_IDS };

const HELP_OPTION: OptionInfo = {
  names: ['-h', '--help'],
  takesValue: false,
  path: false,
  description: 'display help for command',
};

function optionInfo(o: Option): OptionInfo {
  return {
    names: [o.short, o.long].filter((n): n is string => Boolean(n)),
    takesValue: o.required || o.optional,
    path: /<(dir|file)>|\[(dir|file)\]/.test(o.flags),
    description: o.description,
  };
}

/** Every command of the tree, parents first. */
export function describeTree(program: Command): CommandInfo[] {
  const out: CommandInfo[] = [];
  const walk = (cmd: Command, path: string): void => {
    const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
    out.push({
      path,
      subs: subs.map((c) => ({ name: c.name(), description: c.description() })),
      options: [...cmd.options.filter((o) => !o.hidden).map(optionInfo), HELP_OPTION],
    });
    for (const sub of subs) walk(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  walk(program, '');
  return out;
}

export function completionScript(program: Command, shell: Shell): string {
  const tree = describeTree(program);
  if (shell === 'fish') return fishScript(tree);
  const bash = bashScript(tree);
  if (shell === 'bash') return bash;
  return `# zsh completion for agyctl: load with  source <(agyctl completion zsh)\nautoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n${bash}`;
}

const allOptions = (tree: CommandInfo[]): OptionInfo[] => tree.flatMap((c) => c.options);
const longs = (opts: OptionInfo[]): string[] => [...new Set(opts.flatMap((o) => o.names))];
const pattern = (names: string[]): string => (names.length > 0 ? names.join('|') : '--agyctl-none');

function bashScript(tree: CommandInfo[]): string {
  const root = tree[0]!;
  const globals = root.options;
  const all = allOptions(tree);
  const valued = longs(all.filter((o) => o.takesValue));
  const pathValued = longs(all.filter((o) => o.takesValue && o.path));
  const subsCases = tree
    .filter((c) => c.subs.length > 0)
    .map((c) => `    '${c.path}') echo '${c.subs.map((s) => s.name).join(' ')}' ;;`);
  // --version belongs to the program alone.
  const inherited = globals.filter((o) => !o.names.includes('--version'));
  const optsCases = tree.map((c) => {
    const opts = c.path === '' ? globals : [...c.options, ...inherited];
    return `    '${c.path}') echo '${longs(opts)
      .filter((n) => n.startsWith('--'))
      .join(' ')}' ;;`;
  });
  const valueCases = Object.entries(VALUES).map(
    ([flag, values]) => `    ${flag}) COMPREPLY=( $(compgen -W '${values.join(' ')}' -- "$cur") ); return 0 ;;`,
  );
  return `# bash completion for agyctl, generated from its commands by \`agyctl completion bash\`.
# Load it with:  source <(agyctl completion bash)
_agyctl_subs() {
  case "$1" in
${subsCases.join('\n')}
  esac
}
_agyctl_opts() {
  case "$1" in
${optsCases.join('\n')}
  esac
}
_agyctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="" w i skip=0
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
${valueCases.join('\n')}
    ${pattern(pathValued)}) COMPREPLY=( $(compgen -f -- "$cur") ); return 0 ;;
    ${pattern(valued.filter((n) => !pathValued.includes(n) && !(n in VALUES)))}) COMPREPLY=(); return 0 ;;
  esac
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w="\${COMP_WORDS[i]}"
    if (( skip )); then skip=0; continue; fi
    case "$w" in
      ${pattern(valued)}) skip=1; continue ;;
      -*) continue ;;
    esac
    case " $(_agyctl_subs "$path") " in
      *" $w "*) path="\${path:+$path }$w" ;;
    esac
  done
  local subs
  subs="$(_agyctl_subs "$path")"
  if [[ "$cur" == -* || -z "$subs" ]]; then
    COMPREPLY=( $(compgen -W "$(_agyctl_opts "$path")" -- "$cur") )
  else
    COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
  fi
  return 0
}
complete -o default -F _agyctl agyctl
`;
}

const fishQuote = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fishOption(o: OptionInfo, condition: string | undefined): string {
  const parts = ['complete -c agyctl'];
  if (condition !== undefined) parts.push(`-n ${fishQuote(`__agyctl_at ${fishQuote(condition)}`)}`);
  for (const n of o.names) parts.push(n.startsWith('--') ? `-l ${n.slice(2)}` : `-s ${n.slice(1)}`);
  const values = o.names.map((n) => VALUES[n]).find(Boolean);
  if (values) parts.push(`-x -a ${fishQuote(values.join(' '))}`);
  else if (o.takesValue) parts.push(o.path ? '-r -F' : '-x');
  parts.push(`-d ${fishQuote(o.description)}`);
  return parts.join(' ');
}

function fishScript(tree: CommandInfo[]): string {
  const valued = longs(allOptions(tree).filter((o) => o.takesValue));
  const lines = [
    '# fish completion for agyctl, generated from its commands by `agyctl completion fish`.',
    '# Install with:  agyctl completion fish > ~/.config/fish/completions/agyctl.fish',
    'function __agyctl_subs',
    '    switch "$argv[1]"',
    ...tree
      .filter((c) => c.subs.length > 0)
      .flatMap((c) => [
        `        case ${fishQuote(c.path)}`,
        `            printf '%s\\n' ${c.subs.map((s) => s.name).join(' ')}`,
      ]),
    '    end',
    'end',
    'function __agyctl_path',
    '    set -l path',
    '    set -l skip 0',
    '    for w in (commandline -opc)[2..-1]',
    '        if test $skip = 1',
    '            set skip 0',
    '            continue',
    '        end',
    '        switch $w',
    `            case ${valued.join(' ')}`,
    '                set skip 1',
    '                continue',
    "            case '-*'",
    '                continue',
    '        end',
    '        if contains -- $w (__agyctl_subs (string join " " $path))',
    '            set -a path $w',
    '        end',
    '    end',
    '    string join " " $path',
    'end',
    'function __agyctl_at',
    '    set -l p (__agyctl_path)',
    '    test "$p" = "$argv[1]"',
    'end',
    'complete -c agyctl -f',
  ];
  for (const c of tree) {
    for (const s of c.subs)
      lines.push(
        `complete -c agyctl -n ${fishQuote(`__agyctl_at ${fishQuote(c.path)}`)} -a ${s.name} -d ${fishQuote(s.description)}`,
      );
    for (const o of c.options) lines.push(fishOption(o, c.path === '' ? undefined : c.path));
  }
  return `${lines.join('\n')}\n`;
}
