/**
 * The man pages, one per command (agyctl(1), agyctl-backup(1),
 * agyctl-backup-verify(1), ...), as `scripts/man-pages.mjs` writes them for
 * the npm package (the .deb gets the same pages from the executable). Each
 * renders with man-db's `man -l` without a warning (lintian's own groff
 * check), holds every option its command's `--help` lists, and is filled by
 * man to the reader's width rather than pre-wrapped. The command list comes
 * from `--help`, so a new command without a page fails here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../../helpers/cli.js';

let dir = '';
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-man-'));
  await execa(process.execPath, [path.join(ROOT, 'scripts', 'man-pages.mjs'), dir], { timeout: 60_000 });
}, 90_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const helps = new Map<string, Promise<string>>();
/** `agyctl CMD --help`, asked once per command. */
function help(cmd: string[]): Promise<string> {
  const key = cmd.join(' ');
  let text = helps.get(key);
  if (!text) {
    text = execa(process.execPath, [BIN, ...cmd, '--help'], { env: { NO_COLOR: '1', COLUMNS: '80' } }).then(
      (r) => r.stdout,
    );
    helps.set(key, text);
  }
  return text;
}

/** The lines of a `--help` section ("Options:", "Commands:") up to the next blank line. */
function sectionOf(text: string, title: string): string[] {
  const lines = text.split('\n');
  const at = lines.indexOf(title);
  if (at < 0) return [];
  const end = lines.findIndex((line, i) => i > at && line.trim() === '');
  return lines.slice(at + 1, end < 0 ? undefined : end);
}

/** Every command path below the program, as `--help` lists them (the implicit `help` command has no page). */
async function commandsOf(cmd: string[]): Promise<string[][]> {
  const subs = sectionOf(await help(cmd), 'Commands:')
    .map((line) => /^ {2}([a-z][\w-]*)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
  const below = await Promise.all(subs.map((sub) => commandsOf([...cmd, sub])));
  return [cmd, ...below.flat()];
}

/** Every flag in the Options and Global Options sections: `-v`, `--verbose`, `--state-dir`. */
async function flagsOf(cmd: string[]): Promise<string[]> {
  const text = await help(cmd);
  const terms = [...sectionOf(text, 'Options:'), ...sectionOf(text, 'Global Options:')]
    .filter((line) => /^ {2}-/.test(line))
    .map((line) => line.trim().split(/ {2,}/)[0] ?? '');
  return terms.flatMap((term) => term.match(/(?<![\w-])--?[a-zA-Z][\w-]*/g) ?? []);
}

const man = (args: string[], width: number) =>
  execa('man', args, {
    env: { LC_ALL: 'C.UTF-8', MANWIDTH: String(width), MANPAGER: 'cat', PAGER: 'cat' },
    reject: false,
  });

describe('man pages', () => {
  it('there is one page per command, and package.json lists each for npm to link', async () => {
    const expected = (await commandsOf([])).map((cmd) => `${['agyctl', ...cmd].join('-')}.1`);
    expect(expected).toContain('agyctl-backup-verify.1');
    expect(fs.readdirSync(dir).sort()).toEqual([...expected].sort());
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      man: string[];
      files: string[];
    };
    expect([...pkg.man].sort()).toEqual(expected.map((file) => `./man/${file}`).sort());
    expect(pkg.files).toContain('man');
  }, 120_000);

  it('each renders without a groff warning and holds every option of its command', async () => {
    const commandOf = new Map((await commandsOf([])).map((cmd) => [`${['agyctl', ...cmd].join('-')}.1`, cmd]));
    for (const file of fs.readdirSync(dir).sort()) {
      const page = path.join(dir, file);
      // What lintian runs for its groff-message check.
      const checked = await man(['--warnings', '-E', 'UTF-8', '-l', '-Tutf8', '-Z', page], 80);
      expect({ file, stderr: checked.stderr, exit: checked.exitCode }).toEqual({ file, stderr: '', exit: 0 });
      const shown = await man(['-l', page], 80);
      expect(shown.exitCode).toBe(0);
      // The command a page is for, from the help's own tree (`set-auth` has a dash of its own).
      const cmd = commandOf.get(file);
      expect(cmd, file).toBeDefined();
      const flags = await flagsOf(cmd ?? []);
      expect(flags.length).toBeGreaterThan(2);
      for (const flag of flags)
        expect({ file, flag, found: shown.stdout.includes(flag) }).toEqual({ file, flag, found: true });
      expect(shown.stdout).toMatch(new RegExp(`^NAME\\n\\s+${['agyctl', ...(cmd ?? [])].join('-')} - `, 'm'));
    }
  }, 300_000);

  it('is filled by man to the reader width, not pre-wrapped', async () => {
    const page = path.join(dir, 'agyctl-backup.1');
    const wide = await man(['-l', page], 200);
    expect(wide.stdout).toMatch(
      /^ +write and remove nothing: show what a run now would snapshot and what retention would remove \(like restic forget --dry-run\)$/m,
    );
    const narrow = await man(['-l', page], 60);
    const proseLines = narrow.stdout.split('\n').filter((line) => !line.includes('$ agyctl'));
    expect(proseLines.filter((line) => line.length > 60)).toEqual([]);
    // A flag is never hyphenated at a line's end.
    expect(narrow.stdout).not.toMatch(/[\w-]\u2010$/m);
  }, 60_000);
});
