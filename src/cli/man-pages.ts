/**
 * One man page per command (agyctl(1), agyctl-backup(1),
 * agyctl-backup-verify(1), ...), as gh and restic ship them, rendered from the
 * live commander tree and help-text.ts's examples and exit codes: the same
 * source as `--help`. Text is not wrapped here: each paragraph is one roff
 * line, filled by man to the reader's width. Loaded only by the hidden
 * `agyctl __man-pages` that the release and the npm package's prepack call.
 */
import type { Command, Help, Option } from 'commander';
import { commandPath, HELP } from './help-text.js';

export interface ManPage {
  /** The page's file name: agyctl-backup-verify.1 */
  file: string;
  roff: string;
}

/** Every visible command with a page (hidden ones such as `__complete` are the tool's own plumbing). */
const visibleSubcommands = (cmd: Command): Command[] =>
  cmd.commands.filter((sub) => !(sub as unknown as { _hidden: boolean })._hidden);

/** The page's name: 'agyctl-backup-verify'. */
export const pageName = (cmd: Command): string => ['agyctl', ...commandPath(cmd).split(' ').filter(Boolean)].join('-');

/**
 * Text as roff reads it: backslashes escaped, a leading control character
 * neutralised, every dash that starts a word a minus (so `--live` copies as
 * typed), and non-ASCII as a named Unicode escape (no encoding guesswork).
 */
export function roffText(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/(?<!\w)-/g, '\\-')
    .replace(/[^\x20-\x7e\n]/g, (ch) => `\\[u${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}]`)
    .replace(/^([.'])/gm, '\\&$1');
}

/** One paragraph: roff fills it, so it is one input line whatever its length. */
const para = (text: string): string => roffText(text.replace(/\s*\n\s*/g, ' ').trim());

/** A flag as typed: every dash a minus, also inside `--keep-last` (a hyphen may render as U+2010). */
const flags = (term: string): string => roffText(term).replace(/(?<!\\)-/g, '\\-');

const optionEntry = (helper: Help, option: Option): string =>
  `.TP\n\\fB${flags(helper.optionTerm(option))}\\fR\n${para(helper.optionDescription(option))}`;

function section(title: string, body: string[]): string[] {
  return body.length === 0 ? [] : [`.SH ${title}`, ...body];
}

function renderPage(cmd: Command, version: string, filesSection: string | undefined): ManPage {
  const helper = cmd.createHelp();
  const name = pageName(cmd);
  const description = helper.commandDescription(cmd);
  const extra = HELP[commandPath(cmd)];
  const subs = visibleSubcommands(cmd);
  const parent = cmd.parent ? pageName(cmd.parent) : undefined;
  const lines = [
    `.TH ${name.toUpperCase().replace(/-/g, '\\-')} 1 "" "agyctl ${roffText(version)}" "User Commands"`,
    // Flags, paths and page names must not be hyphenated at a line's end, nor spread to the right margin.
    '.nh',
    '.ad l',
    '.SH NAME',
    `${roffText(name)} \\- ${para(description)}`,
    '.SH SYNOPSIS',
    `.B ${roffText(helper.commandUsage(cmd))}`,
    '.SH DESCRIPTION',
    para(description),
    ...section(
      'ARGUMENTS',
      helper
        .visibleArguments(cmd)
        .map((arg) => `.TP\n\\fI${roffText(helper.argumentTerm(arg))}\\fR\n${para(helper.argumentDescription(arg))}`),
    ),
    ...section(
      'OPTIONS',
      helper.visibleOptions(cmd).map((o) => optionEntry(helper, o)),
    ),
    ...section(
      'GLOBAL OPTIONS',
      helper.visibleGlobalOptions(cmd).map((o) => optionEntry(helper, o)),
    ),
    ...section(
      'COMMANDS',
      subs.map(
        (sub) =>
          `.TP\n\\fB${roffText(sub.name())}\\fR\n${para(helper.subcommandDescription(sub))}\nSee \\fB${roffText(pageName(sub))}\\fR(1).`,
      ),
    ),
    ...section(
      'EXAMPLES',
      (extra?.examples ?? []).flatMap(([command, what]) => [
        '.PP',
        para(what),
        '.PP',
        '.RS 4',
        '.nf',
        `$ ${flags(command)}`,
        '.fi',
        '.RE',
      ]),
    ),
    ...section(
      'EXIT STATUS',
      (extra?.exits ?? []).map(([code, when]) => `.TP\n\\fB${code}\\fR\n${para(when)}`),
    ),
    ...(extra ? ['.PP', 'All exit codes and their meaning: \\fBagyctl help exit\\-codes\\fR.'] : []),
    ...(filesSection ? ['.SH FILES', filesSection] : []),
    '.SH SEE ALSO',
    [...(parent ? [parent] : []), ...subs.map(pageName)].map((page) => `\\fB${roffText(page)}\\fR(1)`).join(', ') ||
      '\\fBagyctl\\fR(1)',
  ];
  if (!cmd.parent)
    lines.push('.PP', para("The documentation: /usr/share/doc/agyctl/ (the .deb) or the npm package's docs/."));
  return { file: `${name}.1`, roff: `${lines.join('\n')}\n` };
}

const FILES =
  'The single executable writes its SQLite binding once to the first usable of ' +
  '\\fB$AGYCTL_CACHE_DIR\\fR, \\fB$XDG_CACHE_HOME/agyctl\\fR, \\fB~/.cache/agyctl\\fR, ' +
  '\\fB$RUNTIME_DIRECTORY/agyctl\\fR, \\fB$TMPDIR/agyctl\\-UID\\fR, \\fB/tmp/agyctl\\-UID\\fR, ' +
  '\\fB/var/tmp/agyctl\\-UID\\fR.';

/** The pages of `program` and every visible command under it, parents first. */
export function manPages(program: Command, version: string): ManPage[] {
  const pages: ManPage[] = [];
  const walk = (cmd: Command): void => {
    pages.push(renderPage(cmd, version, cmd.parent ? undefined : FILES));
    for (const sub of visibleSubcommands(cmd)) walk(sub);
  };
  walk(program);
  return pages;
}
