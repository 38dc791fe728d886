/**
 * Shell completion scripts generated from the live commander tree: every
 * command, subcommand, option and argument the program has when the script
 * is asked for, so commands added later complete without touching this file.
 * Values complete too: profiles, auth types, method ids, shells (from an
 * argument's or option's choices, or the tables below) and snapshot names,
 * which the script lists at completion time through the hidden
 * `agyctl __complete snapshots` (names only, checked against the snapshot
 * name pattern again in the shell, since bash expands a word list).
 * bash, zsh (native: #compdef and _arguments) and fish each get their own
 * script. Loaded only by `agyctl completion`.
 */
import type { Argument, Command, Option } from 'commander';
import { getProfile, PROFILE_IDS } from '../profiles/index.js';
import { AUTH_TYPES, LEGACY_AUTH_TYPES } from '../settings/auth-types.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** Values completed at TAB time (the script asks agyctl), rather than a fixed list. */
export const SNAPSHOTS = 'snapshots';
type Values = readonly string[] | typeof SNAPSHOTS;

interface OptionInfo {
  names: string[];
  takesValue: boolean;
  /** The value is a file or directory (`<dir>`, `<file>`). */
  path: 'dir' | 'file' | undefined;
  values: readonly string[] | undefined;
  description: string;
}

interface ArgumentInfo {
  name: string;
  variadic: boolean;
  values: Values | undefined;
}

interface CommandInfo {
  /** 'settings set-auth'; '' for the program. */
  path: string;
  subs: Array<{ name: string; description: string }>;
  options: OptionInfo[];
  args: ArgumentInfo[];
}

const METHOD_IDS = [...new Set(PROFILE_IDS.flatMap((id) => getProfile(id).authMethods))];

/** Values offered after an option, by long name (an option's own `.choices()` are used too). */
const OPTION_VALUES: Readonly<Record<string, readonly string[]>> = {
  '--profile': PROFILE_IDS,
  '--method': METHOD_IDS,
};

/** Values of positional arguments, by command path (an argument's own `.choices()` are used too). */
const ARGUMENT_VALUES: Readonly<Record<string, Values>> = {
  'settings set-auth': [...AUTH_TYPES, ...Object.keys(LEGACY_AUTH_TYPES)],
  restore: SNAPSHOTS,
  'backup verify': SNAPSHOTS,
};

/** What a snapshot name looks like (src/backup/layout.ts); the scripts check each listed name against it. */
const SNAPSHOT_GLOB_RE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}\\.[0-9]{3}Z$';

const HELP_OPTION: OptionInfo = {
  names: ['-h', '--help'],
  takesValue: false,
  path: undefined,
  values: undefined,
  description: 'display help for command',
};

function optionInfo(option: Option): OptionInfo {
  const kind = /<(dir|file)[|>]|\[(dir|file)\]/.exec(option.flags);
  return {
    names: [option.short, option.long].filter((n): n is string => Boolean(n)),
    takesValue: option.required || option.optional,
    path: kind ? ((kind[1] ?? kind[2]) as 'dir' | 'file') : undefined,
    values: option.argChoices ?? (option.long ? OPTION_VALUES[option.long] : undefined),
    description: option.description,
  };
}

function argumentInfo(a: Argument, index: number, path: string): ArgumentInfo {
  return {
    name: a.name(),
    variadic: a.variadic,
    values: a.argChoices ?? (index === 0 ? ARGUMENT_VALUES[path] : undefined),
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
      options: [...cmd.options.filter((option) => !option.hidden).map(optionInfo), HELP_OPTION],
      args: cmd.registeredArguments.map((a, i) => argumentInfo(a, i, path)),
    });
    for (const sub of subs) walk(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  walk(program, '');
  return out;
}

/** `agyctl help <topic>` (answered by main.ts, not a command of the tree): every command, and exit-codes. */
function withHelpTopics(tree: CommandInfo[]): CommandInfo[] {
  const [root, ...rest] = tree;
  if (!root) return tree;
  const help = { name: 'help', description: 'show the help of a command, or every exit code (help exit-codes)' };
  const topics = [...root.subs, { name: 'exit-codes', description: 'every exit code and what it means' }];
  return [
    { ...root, subs: [...root.subs, help] },
    ...rest,
    { path: 'help', subs: topics, options: [HELP_OPTION], args: [] },
  ];
}

export function completionScript(program: Command, shell: Shell): string {
  const tree = withHelpTopics(describeTree(program));
  if (shell === 'fish') return fishScript(tree);
  if (shell === 'zsh') return zshScript(tree);
  return bashScript(tree);
}

const allOptions = (tree: CommandInfo[]): OptionInfo[] => tree.flatMap((c) => c.options);
const longs = (opts: OptionInfo[]): string[] => [...new Set(opts.flatMap((option) => option.names))];
const pattern = (names: string[]): string => (names.length > 0 ? names.join('|') : '--agyctl-none');
/** The program's options a subcommand also takes (--version belongs to the program alone). */
const inheritedOf = (tree: CommandInfo[]): OptionInfo[] =>
  tree[0]!.options.filter((option) => !option.names.includes('--version'));
const optionsAt = (tree: CommandInfo[], c: CommandInfo): OptionInfo[] =>
  c.path === '' ? c.options : [...c.options, ...inheritedOf(tree).filter((option) => !option.names.includes('--help'))];

function bashScript(tree: CommandInfo[]): string {
  const all = allOptions(tree);
  const valued = longs(all.filter((option) => option.takesValue));
  const withValues = all.filter((option) => option.takesValue && option.values);
  const pathValued = longs(all.filter((option) => option.takesValue && option.path && !option.values));
  const fixed = new Set(
    longs([...withValues, ...all.filter((option) => option.takesValue && option.path && !option.values)]),
  );
  const subsCases = tree
    .filter((c) => c.subs.length > 0)
    .map((c) => `    '${c.path}') echo '${c.subs.map((s) => s.name).join(' ')}' ;;`);
  const optsCases = tree.map(
    (c) =>
      `    '${c.path}') echo '${longs(optionsAt(tree, c))
        .filter((n) => n.startsWith('--'))
        .join(' ')}' ;;`,
  );
  const valueCases = [
    ...new Map(withValues.flatMap((option) => option.names.map((n) => [n, option.values!] as const))).entries(),
  ].map(([flag, values]) => `    ${flag}) COMPREPLY=( $(compgen -W '${values.join(' ')}' -- "$cur") ); return 0 ;;`);
  const argCases = tree
    .filter((c) => c.args[0]?.values !== undefined)
    .map((c) => {
      const v = c.args[0]!.values!;
      return v === SNAPSHOTS ? `    '${c.path}') _agyctl_snapshots ;;` : `    '${c.path}') echo '${v.join(' ')}' ;;`;
    });
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
# Snapshot names in the backup directory (--from on the line, else the default), asked of agyctl itself.
_agyctl_snapshots() {
  local self="\${COMP_WORDS[0]}" from="" i n
  [[ "$self" == "~/"* ]] && self="$HOME/\${self#\\~/}"
  for (( i = 1; i < COMP_CWORD; i++ )); do
    [[ "\${COMP_WORDS[i]}" == --from ]] && from="\${COMP_WORDS[i+1]}"
  done
  echo latest
  # Only names of the snapshot pattern reach compgen -W, which expands its word list.
  while IFS= read -r n; do
    [[ "$n" =~ ${SNAPSHOT_GLOB_RE} ]] && echo "$n"
  done < <("$self" __complete snapshots \${from:+--from "$from"} 2>/dev/null)
}
# Values of the first positional argument.
_agyctl_args() {
  case "$1" in
${argCases.join('\n')}
  esac
}
_agyctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="" w i skip=0 npos=0
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
${valueCases.join('\n')}
    ${pattern(pathValued)}) COMPREPLY=( $(compgen -f -- "$cur") ); return 0 ;;
    ${pattern(valued.filter((n) => !fixed.has(n)))}) COMPREPLY=(); return 0 ;;
  esac
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w="\${COMP_WORDS[i]}"
    if (( skip )); then skip=0; continue; fi
    case "$w" in
      ${pattern(valued)}) skip=1; continue ;;
      -*) continue ;;
    esac
    case " $(_agyctl_subs "$path") " in
      *" $w "*) path="\${path:+$path }$w"; npos=0 ;;
      *) npos=$(( npos + 1 )) ;;
    esac
  done
  local subs values
  subs="$(_agyctl_subs "$path")"
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$(_agyctl_opts "$path")" -- "$cur") )
  elif [[ -n "$subs" ]]; then
    COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
  elif (( npos == 0 )) && values="$(_agyctl_args "$path")" && [[ -n "$values" ]]; then
    COMPREPLY=( $(compgen -W "$values" -- "$cur") )
  else
    COMPREPLY=( $(compgen -W "$(_agyctl_opts "$path")" -- "$cur") )
  fi
  return 0
}
complete -o default -F _agyctl agyctl
`;
}

/** A word in single quotes for zsh (and sh). */
const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
/** Text inside an _arguments spec: [description] and :message: fields. */
const zspec = (s: string): string => s.replace(/\\/g, '\\\\').replace(/([[\]:])/g, '\\$1');
const zname = (path: string): string => `_agyctl${path ? `__${path.replace(/[^A-Za-z0-9]+/g, '_')}` : ''}`;

function zshValues(values: Values | undefined, what: 'dir' | 'file' | undefined): string {
  if (values === SNAPSHOTS) return '_agyctl_snapshots';
  if (values) return `(${values.join(' ')})`;
  if (what === 'dir') return '_files -/';
  return '_files';
}

function zshOption(option: OptionInfo): string[] {
  return option.names.map((n) => {
    const head = `${n}[${zspec(option.description)}]`;
    if (!option.takesValue) return sq(head);
    const message = zspec(n.replace(/^-+/, ''));
    const action = option.values || option.path ? zshValues(option.values, option.path) : ' ';
    return sq(`${head}:${message}:${action}`);
  });
}

function zshFunction(tree: CommandInfo[], c: CommandInfo): string {
  const specs = optionsAt(tree, c).flatMap(zshOption);
  const lines = [`${zname(c.path)}() {`];
  if (c.subs.length > 0) {
    lines.push(
      '  local curcontext="$curcontext" state line',
      '  typeset -A opt_args',
      `  _arguments -C \\`,
      ...specs.map((s) => `    ${s} \\`),
      `    '1: :->cmd' \\`,
      `    '*:: :->args' && return`,
      '  case $state in',
      '    cmd)',
      '      local -a subs',
      `      subs=(${c.subs.map((s) => sq(`${s.name}:${s.description.replace(/:/g, '\\:')}`)).join(' ')})`,
      `      _describe -t commands ${sq(`agyctl ${c.path || 'command'}`.trim())} subs ;;`,
      '    args)',
      '      case $words[1] in',
      ...c.subs.map((s) => `        ${s.name}) ${zname(c.path ? `${c.path} ${s.name}` : s.name)} ;;`),
      '      esac ;;',
      '  esac',
    );
  } else {
    const args = c.args.map((a, i) =>
      sq(`${a.variadic ? '*' : String(i + 1)}:${zspec(a.name)}:${zshValues(a.values, undefined)}`),
    );
    lines.push(
      '  _arguments \\',
      ...[...specs, ...args].map((s, i, all) => `    ${s}${i < all.length - 1 ? ' \\' : ''}`),
    );
  }
  lines.push('}');
  return lines.join('\n');
}

function zshScript(tree: CommandInfo[]): string {
  return `#compdef agyctl
# zsh completion for agyctl, generated from its commands by \`agyctl completion zsh\`.
# Install it as _agyctl in a directory on $fpath (before compinit runs), e.g.
#   mkdir -p ~/.zfunc && agyctl completion zsh > ~/.zfunc/_agyctl   with   fpath=(~/.zfunc $fpath)   in ~/.zshrc,
# or load it into a shell that has run compinit:  source <(agyctl completion zsh)

# Snapshot names in the backup directory (--from on the line, else the default), asked of agyctl itself.
_agyctl_snapshots() {
  local i n
  local -a names from
  i=\${words[(I)--from]}
  (( i > 0 )) && from=(--from "\${words[i+1]}")  # agyctl expands a leading ~/ itself
  names=(latest)
  for n in \${(f)"$(command agyctl __complete snapshots "\${from[@]}" 2>/dev/null)"}; do
    [[ "$n" =~ ${SNAPSHOT_GLOB_RE} ]] && names+=("$n")
  done
  compadd -a names
}

${tree.map((c) => zshFunction(tree, c)).join('\n\n')}

if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _agyctl "$@"
else
  compdef _agyctl agyctl
fi
`;
}

const fishQuote = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fishOption(option: OptionInfo, condition: string | undefined): string {
  const parts = ['complete -c agyctl'];
  if (condition !== undefined) parts.push(`-n ${fishQuote(`__agyctl_at ${fishQuote(condition)}`)}`);
  for (const n of option.names) parts.push(n.startsWith('--') ? `-l ${n.slice(2)}` : `-s ${n.slice(1)}`);
  if (option.values) parts.push(`-x -a ${fishQuote(option.values.join(' '))}`);
  else if (option.takesValue) parts.push(option.path ? '-r -F' : '-x');
  parts.push(`-d ${fishQuote(option.description)}`);
  return parts.join(' ');
}

function fishArgument(c: CommandInfo): string | undefined {
  const values = c.args[0]?.values;
  if (values === undefined) return undefined;
  const list = values === SNAPSHOTS ? '(__agyctl_snapshots)' : values.join(' ');
  return `complete -c agyctl -n ${fishQuote(`__agyctl_at ${fishQuote(c.path)}`)} -a ${fishQuote(list)}`;
}

function fishScript(tree: CommandInfo[]): string {
  const valued = longs(allOptions(tree).filter((option) => option.takesValue));
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
    '# Snapshot names in the backup directory (--from on the line, else the default), asked of agyctl itself.',
    'function __agyctl_snapshots',
    '    set -l words (commandline -opc)',
    '    set -l from',
    '    set -l i (contains -i -- --from $words)',
    '    and set from --from $words[(math $i + 1)]',
    '    echo latest',
    `    $words[1] __complete snapshots $from 2>/dev/null | string match -r ${fishQuote(SNAPSHOT_GLOB_RE)}`,
    'end',
    'complete -c agyctl -f',
  ];
  for (const c of tree) {
    for (const s of c.subs)
      lines.push(
        `complete -c agyctl -n ${fishQuote(`__agyctl_at ${fishQuote(c.path)}`)} -a ${s.name} -d ${fishQuote(s.description)}`,
      );
    for (const option of c.options) lines.push(fishOption(option, c.path === '' ? undefined : c.path));
    const arg = fishArgument(c);
    if (arg) lines.push(arg);
  }
  return `${lines.join('\n')}\n`;
}
