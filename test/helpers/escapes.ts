/**
 * Running many agyctl command lines in one shell, on a pipe or on a
 * pseudo-terminal (script(1)), with colour turned off one way or another,
 * and finding escape sequences in what each wrote. One shell runs the whole
 * list, a marker line before and after each command, so a list costs one
 * pseudo-terminal; what each command wrote is looked at alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { AGYCTL_ARGV, type Sandbox } from './cli.js';

export interface ColourMode {
  name: string;
  env: NodeJS.ProcessEnv;
  /** Flags given before the command's words. */
  flags: string[];
}

/** The three ways to turn colour off: the environment, a terminal that has none, the flag. */
export const NO_COLOUR_MODES: ColourMode[] = [
  { name: 'NO_COLOR=1', env: { NO_COLOR: '1', TERM: 'xterm-256color' }, flags: [] },
  { name: 'TERM=dumb', env: { NO_COLOR: undefined, TERM: 'dumb' }, flags: [] },
  { name: '--no-color', env: { NO_COLOR: undefined, TERM: 'xterm-256color' }, flags: ['--no-color'] },
];

/** Colour allowed: the control that shows the harness sees escapes where agyctl writes them. */
export const COLOUR_ALLOWED: ColourMode = {
  name: 'colour',
  env: { NO_COLOR: undefined, TERM: 'xterm-256color' },
  flags: [],
};

/** One command line and the mode it runs in. */
export interface Line {
  argv: string[];
  mode: ColourMode;
}

/** What one command wrote (stdout and stderr together, as bytes) and its exit code (-1: it never ended). */
export interface Seen {
  argv: string[];
  mode: string;
  bytes: Buffer;
  exit: number;
}

export const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** A mode's environment in front of one command: `env -u NAME` for what it unsets, `NAME=value` for what it sets. */
function envPrefix(env: NodeJS.ProcessEnv): string {
  const set = Object.entries(env).filter(([, v]) => v !== undefined);
  const unset = Object.entries(env).filter(([, v]) => v === undefined);
  return [
    ...(unset.length > 0 ? [`env ${unset.map(([k]) => `-u ${k}`).join(' ')}`] : []),
    ...set.map(([k, v]) => `${k}=${quote(String(v))}`),
  ].join(' ');
}

/**
 * Runs every line in one shell, on a pseudo-terminal of 100×40 (`tty`: stdin is the terminal too, as a
 * person's) or on a pipe (stdin /dev/null), each in its own mode, and returns what each wrote.
 */
export async function runLines(sb: Sandbox, lines: Line[], tty: boolean, timeoutMs: number): Promise<Seen[]> {
  const agy = AGYCTL_ARGV.map(quote).join(' ');
  const shell = lines.map(({ argv, mode }, i) => {
    const cmd = `${envPrefix(mode.env)} ${agy} ${[...mode.flags, ...argv].map(quote).join(' ')}`;
    return `printf '\\n@@@ %d start\\n' ${i}; ${cmd} 2>&1${tty ? '' : ' </dev/null'}; printf '\\n@@@ %d end %d\\n' ${i} $?`;
  });
  const file = path.join(sb.root, `lines-${tty ? 'tty' : 'pipe'}-${process.hrtime.bigint()}.sh`);
  fs.writeFileSync(file, ['stty cols 100 rows 40 2>/dev/null', ...shell].join('\n'));
  const run = tty
    ? execa('script', ['-qec', `sh ${quote(file)}`, '/dev/null'], options('pipe'))
    : execa('sh', [file], options('ignore'));
  function options(stdin: 'pipe' | 'ignore') {
    return {
      env: sb.env,
      extendEnv: false,
      cwd: sb.root,
      reject: false,
      timeout: timeoutMs,
      stdin,
      encoding: 'buffer',
    } as const;
  }
  const all = Buffer.from((await run).stdout as Uint8Array);
  return lines.map(({ argv, mode }, i) => {
    const start = all.indexOf(`@@@ ${i} start`);
    const endAt = start < 0 ? -1 : all.indexOf(`@@@ ${i} end `, start);
    const end = endAt < 0 ? null : /^@@@ \d+ end (\d+)/.exec(all.subarray(endAt, endAt + 40).toString('latin1'));
    if (!end) return { argv, mode: mode.name, bytes: Buffer.from(all.toString('utf8').slice(-400)), exit: -1 };
    return { argv, mode: mode.name, bytes: all.subarray(all.indexOf('\n', start) + 1, endAt), exit: Number(end[1]) };
  });
}

/** The escape sequences in what a command wrote: ESC, the C1 CSI character, or bytes that are not UTF-8 (a lone 0x9b). */
export function escapesIn(bytes: Buffer): string[] {
  const text = bytes.toString('utf8');
  const found = [...text.matchAll(/[\x1b\u009b].{0,8}/gs)].map((m) => JSON.stringify(m[0]));
  if (!Buffer.from(text, 'utf8').equals(bytes)) found.push('bytes that are not UTF-8');
  return found;
}

/** One line per command that wrote an escape, ended with another code than `exits` allows, or wrote nothing. */
export function problemsOf(seen: Seen[], exits: (s: Seen) => number[]): string[] {
  return seen.flatMap((s) => {
    const shown = `${s.mode} ${s.argv.join(' ')}`;
    const problems: string[] = [];
    const escapes = escapesIn(s.bytes);
    if (escapes.length > 0) problems.push(`${shown}: ${escapes.slice(0, 3).join(' ')}`);
    if (!exits(s).includes(s.exit))
      problems.push(`${shown}: exit ${s.exit}: ${s.bytes.toString('utf8').slice(0, 300)}`);
    if (s.bytes.length === 0) problems.push(`${shown}: wrote nothing`);
    return problems;
  });
}
