/**
 * Every path option of every command, the same way. The options come from
 * the help tree (every `<file>`, `<dir>`, `<file|->` and `<dir|->` option,
 * and the SNAPSHOT and ARCHIVE arguments), so a new path option without a
 * row in USES fails the guard, naming it. For each:
 * - `~/x` is HOME/x, as `--opt=~/x` (which no shell expands) and as
 *   `--opt ~/x` (argv given directly, as a quoted `'~/x'` would be);
 * - an output whose parent is missing, on a read-only file system or on a
 *   full one ends with the documented exit code and one `error:` line (and at
 *   most one `hint:`), no stack trace, no "This is a bug", and leaves no file
 *   at the destination;
 * - a command whose stdout reader has gone (`| head`) ends with 141
 *   (docs/exit-codes.md), printing nothing.
 * The hidden `__login-supervisor --record DIR` is not in the help tree: agyctl
 * itself passes it an absolute path.
 *
 * @module-tag root
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { AGYCTL_ARGV, agyctl, makeSandbox, type RunResult, type Sandbox } from '../../helpers/cli.js';
import { helpTree, sectionOf } from '../../helpers/help-tree.js';

const A = '11111111-1111-4111-8111-111111111111';
const ZEROS = '0'.repeat(64);

function conversation(sb: Sandbox): void {
  const dir = path.join(sb.stateDir, 'conversations');
  fs.mkdirSync(dir, { recursive: true });
  const db = new Database(path.join(dir, `${A}.db`));
  db.exec('CREATE TABLE steps (n INTEGER); INSERT INTO steps VALUES (1);');
  db.close();
  fs.writeFileSync(path.join(dir, `${A}.meta`), '{"cwd":"/work"}');
}

/** A fresh sandbox with one conversation, and an empty file for `server install` to be given. */
function newSandbox(): Sandbox {
  const sandbox = makeSandbox(); // removed when the test ends
  conversation(sandbox);
  fs.writeFileSync(path.join(sandbox.root, 'empty.tgz'), '');
  return sandbox;
}

// ---- the help tree ----------------------------------------------------------

const PATH_VALUE = /^(file|dir|path)(\|-)?$/;
const PATH_ARG = /[<[](snapshot|archive|dir|file|path)(\.\.\.)?[>\]]/g;

/** Every path option and argument in the help tree: `--state-dir` (global), `check --prometheus`, `restore [snapshot]`. */
async function pathOptionsOfTree(sb: Sandbox): Promise<Set<string>> {
  const found = new Set<string>();
  const globals = new Set<string>();
  // The program comes first in the walk, so its options are known as global before any command lists them.
  for (const { path: cmd, help: text } of await helpTree(sb)) {
    const usage = text.split('\n')[0] ?? '';
    for (const m of usage.matchAll(PATH_ARG)) found.add(`${cmd.join(' ')} ${m[0]}`);
    for (const title of ['Options:', 'Global Options:'])
      for (const line of sectionOf(text, title)) {
        const m = /^\s+(?:-\w, )?(--[\w-]+) <([^>]+)>/.exec(line);
        if (!m || !PATH_VALUE.test(m[2]!)) continue;
        if (cmd.length === 0) globals.add(m[1]!);
        found.add(globals.has(m[1]!) ? m[1]! : `${cmd.join(' ')} ${m[1]}`);
      }
  }
  return found;
}

// ---- the table --------------------------------------------------------------

interface PathUse {
  what: 'input file' | 'input dir' | 'output file' | 'output dir';
  /** The command line up to the path (the option, or nothing for an argument). */
  argv: string[];
  /** Arguments after the path. */
  after?: string[];
  /** How `~/pc/leaf` is seen to be HOME/pc/leaf: named in the output, or made there. */
  shows: 'named' | 'made';
  /** What the output says when it used HOME/pc/leaf (default: that path). */
  names?: string;
  /** Put something at HOME/pc/leaf first (an installed server to list). */
  seed?: (at: string) => void;
}

/** An installed server version under a --prefix, as `server install` leaves one. */
function installedServerAt(prefix: string): void {
  const nameDir = path.join(prefix, 'antigravity-acp');
  fs.mkdirSync(path.join(nameDir, '9.9.9'), { recursive: true });
  const meta = { name: 'antigravity-acp', version: '9.9.9', cmd: 'agy', args: [], sha256: ZEROS };
  fs.writeFileSync(path.join(nameDir, '.9.9.9.json'), JSON.stringify(meta));
  fs.symlinkSync('9.9.9', path.join(nameDir, 'current'));
}

const USES: Record<string, PathUse> = {
  '--state-dir': { what: 'input dir', argv: ['sessions', '--state-dir'], shows: 'named' },
  '--trace': { what: 'output file', argv: ['version', '--trace'], shows: 'made' },
  'check --prometheus': { what: 'output file', argv: ['check', '--prometheus'], shows: 'named' },
  'sessions export [snapshot]': { what: 'input dir', argv: ['sessions', 'export'], shows: 'named' },
  'sessions export --out': { what: 'output dir', argv: ['sessions', 'export', '--out'], shows: 'made' },
  'sessions export --from': {
    what: 'input dir',
    argv: ['sessions', 'export', '--from'],
    after: ['nosuch'],
    shows: 'named',
  },
  'backup --to': { what: 'output dir', argv: ['backup', '--to'], shows: 'made' },
  'backup --archive': { what: 'output file', argv: ['backup', '--archive'], shows: 'named' },
  'backup --prometheus': { what: 'output file', argv: ['backup', '--prometheus'], shows: 'named' },
  'backup list --from': { what: 'input dir', argv: ['backup', 'list', '--from'], shows: 'named' },
  'backup verify <snapshot>': { what: 'input dir', argv: ['backup', 'verify'], shows: 'named' },
  'backup verify --from': {
    what: 'input dir',
    argv: ['backup', 'verify', '--from'],
    after: ['nosuch'],
    shows: 'named',
  },
  'restore [snapshot]': { what: 'input dir', argv: ['restore'], shows: 'named' },
  'restore --archive': { what: 'input file', argv: ['restore', '--archive'], shows: 'named' },
  'restore --from': { what: 'input dir', argv: ['restore', '--from'], after: ['nosuch'], shows: 'named' },
  'connect --inventory': { what: 'input file', argv: ['connect', '--inventory'], shows: 'named' },
  'server install <archive>': {
    what: 'input file',
    argv: ['server', 'install', '--version', '1', '--sha256', ZEROS],
    shows: 'named',
  },
  'server install --sums': {
    what: 'input file',
    argv: ['server', 'install', '--version', '1', '--sums'],
    after: ['empty.tgz'],
    shows: 'named',
  },
  'server install --agent-json': {
    what: 'input file',
    argv: ['server', 'install', '--sha256', ZEROS, '--agent-json'],
    after: ['empty.tgz'],
    shows: 'named',
  },
  'server install --prefix': {
    what: 'output dir',
    argv: ['server', 'install', '--version', '1', '--sha256', ZEROS, '--prefix'],
    after: ['empty.tgz'],
    shows: 'named',
    seed: (at) => fs.writeFileSync(at, 'a file, not a directory'),
  },
  'server list --prefix': {
    what: 'input dir',
    argv: ['server', 'list', '--json', '--prefix'],
    shows: 'named',
    seed: installedServerAt,
  },
  'server use --prefix': { what: 'input dir', argv: ['server', 'use', '--prefix'], after: ['1'], shows: 'named' },
  'server remove --prefix': { what: 'input dir', argv: ['server', 'remove', '--prefix'], after: ['1'], shows: 'named' },
  'server prune --prefix': {
    what: 'input dir',
    argv: ['server', 'prune', '--json', '--keep', '1', '--prefix'],
    shows: 'named',
    seed: installedServerAt,
  },
  'server status --prefix': {
    what: 'input dir',
    argv: ['server', 'status', '--json', '--prefix'],
    shows: 'named',
    seed: installedServerAt,
  },
};

/** The argv forms of `~/pc/leaf` for a row: `--opt=~/x` and `--opt ~/x` for an option, `~/x` for an argument. */
function tildeForms(use: PathUse): string[][] {
  const value = '~/pc/leaf';
  const last = use.argv.at(-1) ?? '';
  const after = use.after ?? [];
  if (!last.startsWith('--')) return [[...use.argv, value, ...after]];
  const before = use.argv.slice(0, -1);
  return [
    [...before, `${last}=${value}`, ...after],
    [...before, last, value, ...after],
  ];
}

describe('the table of path options', () => {
  it('holds every path option and argument of the help tree, and no other', async () => {
    const sb = newSandbox();
    const tree = await pathOptionsOfTree(sb);
    expect(tree.size).toBeGreaterThan(10);
    const missing = [...tree].filter((key) => !(key in USES));
    expect(missing, 'path options with no row in USES').toEqual([]);
    const stale = Object.keys(USES).filter((key) => !tree.has(key));
    expect(stale, 'rows in USES for options the tree does not have').toEqual([]);
  }, 120_000);
});

describe('~ and ~/x are HOME', () => {
  for (const [key, use] of Object.entries(USES))
    it(`${key} (${use.what})`, async () => {
      const sb = newSandbox();
      const at = path.join(sb.home, 'pc', 'leaf');
      for (const argv of tildeForms(use)) {
        fs.rmSync(path.join(sb.home, 'pc'), { recursive: true, force: true });
        if (use.shows === 'made' || use.seed) fs.mkdirSync(path.dirname(at), { recursive: true });
        use.seed?.(at);
        const r = await agyctl(argv, sb);
        const said = r.stdout + r.stderr;
        expect(said, argv.join(' ')).not.toMatch(/^\s+at |This is a bug/m);
        expect(said, argv.join(' ')).not.toContain('/~/');
        if (use.shows === 'made') expect(fs.existsSync(at), `${argv.join(' ')}: ${said}`).toBe(true);
        else expect(said, argv.join(' ')).toContain(use.names ?? at);
      }
    }, 60_000);
});

// ---- outputs that cannot be written -----------------------------------------

interface Outcome extends RunResult {
  /** Files (not directories: an empty one made before the disk filled holds nothing) left in the read-only and the full file system, but the filler. */
  left: string[];
}

/**
 * agyctl in a mount namespace of its own with `<root>/ro` a read-only tmpfs
 * and `<root>/full` a full one; what is left there is listed before the
 * namespace (and its mounts) goes.
 */
async function inPlaces(sb: Sandbox, args: string[]): Promise<Outcome> {
  for (const dir of ['ro', 'full']) fs.mkdirSync(path.join(sb.root, dir), { recursive: true });
  const script = [
    'set -e',
    'mount -t tmpfs -o ro,size=1m tmpfs "$R/ro"',
    'mount -t tmpfs -o size=64k tmpfs "$R/full"',
    'cat /dev/zero > "$R/full/filler" 2>/dev/null || true',
    'set +e',
    '"$@"',
    'rc=$?',
    'find "$R/ro" "$R/full" -mindepth 1 ! -type d ! -name filler > "$R/left.txt"',
    'exit $rc',
  ].join('\n');
  const r = await execa('unshare', ['-m', 'sh', '-c', script, 'sh', ...AGYCTL_ARGV, ...args], {
    env: { ...sb.env, R: sb.root },
    extendEnv: false,
    cwd: sb.root,
    reject: false,
    timeout: 60_000,
    stdin: 'ignore',
  });
  const leftFile = path.join(sb.root, 'left.txt');
  const left = fs.existsSync(leftFile)
    ? fs.readFileSync(leftFile, 'utf8').split('\n').filter(Boolean)
    : ['(not listed)'];
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr), left };
}

function expectOneLine(r: RunResult, exit: number, what: string): void {
  const shown = `${what}\n${r.stdout}${r.stderr}`;
  expect(r.exitCode, shown).toBe(exit);
  expect(r.stderr, shown).not.toMatch(/^\s+at |This is a bug|Internal error/m);
  const lines = r.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(
    lines.filter((line) => line.startsWith('error: ')),
    shown,
  ).toHaveLength(1);
  expect(lines.filter((line) => line.startsWith('hint: ')).length, shown).toBeLessThanOrEqual(1);
  expect(
    lines.filter((line) => !/^(error|hint): /.test(line)),
    shown,
  ).toEqual([]);
}

/** Each output: how to run it with the path last, and the exit a full disk gets (docs/exit-codes.md). */
const OUTPUTS: Record<string, { argv: (sb: Sandbox) => string[]; log?: boolean }> = {
  // A log, appended to (also an existing one): what was written before the disk filled stays.
  '--trace': { argv: () => ['probe', '--trace'], log: true },
  'check --prometheus': { argv: () => ['check', '--prometheus'] },
  'backup --prometheus': { argv: (sb) => ['backup', '--to', path.join(sb.root, 'bk'), '--prometheus'] },
  'backup --to': { argv: () => ['backup', '--to'] },
  'backup --archive': { argv: (sb) => ['backup', '--to', path.join(sb.root, 'bk'), '--archive'] },
  'sessions export --out': { argv: () => ['sessions', 'export', '--out'] },
  'server install --prefix': {
    argv: (sb) => [
      'server',
      'install',
      '--version',
      '1',
      '--sha256',
      ZEROS,
      path.join(sb.root, 'empty.tgz'),
      '--prefix',
    ],
  },
};

describe('an output that cannot be written: the documented code, one line, no file left', () => {
  it('every output of the table is here', () => {
    const outputs = Object.entries(USES)
      .filter(([, use]) => use.what.startsWith('output'))
      .map(([key]) => key);
    expect(Object.keys(OUTPUTS).sort()).toEqual(outputs.sort());
  });

  for (const [key, out] of Object.entries(OUTPUTS)) {
    const isFile = USES[key]?.what === 'output file';
    if (isFile)
      it(`${key}: a missing parent is exit 2`, async () => {
        const sb = newSandbox();
        const at = path.join(sb.root, 'missing', 'leaf');
        expectOneLine(await agyctl([...out.argv(sb), at], sb), 2, key);
        expect(fs.existsSync(path.dirname(at))).toBe(false);
      }, 60_000);

    it(`${key}: a read-only file system is exit 2`, async () => {
      const sb = newSandbox();
      const r = await inPlaces(sb, [...out.argv(sb), path.join(sb.root, 'ro', 'leaf')]);
      expectOneLine(r, 2, key);
      // Node's recursive mkdir says ENOENT on a read-only file system: not what the user is told.
      expect(r.stderr).not.toMatch(/does not exist|ENOENT/);
      expect(r.left).toEqual([]);
    }, 60_000);

    it(`${key}: a full file system is exit 6`, async () => {
      const sb = newSandbox();
      const at = path.join(sb.root, 'full', 'leaf');
      const r = await inPlaces(sb, [...out.argv(sb), at]);
      expectOneLine(r, 6, key);
      expect(r.left).toEqual(out.log ? [at] : []);
    }, 60_000);
  }
});

// ---- a reader that goes away ------------------------------------------------

/** Commands that write much to stdout (`sessions export --out -`, which needs a signed-in server: sessions-export.test.ts). */
const READERS: string[][] = [
  ['--help'],
  ['backup', '--help'],
  ['help', 'exit-codes'],
  ['--json', 'help', 'exit-codes'],
  ['completion', 'bash'],
  ['sessions'],
  ['sessions', '--json'],
  ['backup', 'list', '--json'],
  ['version', '--json'],
];

describe('a reader that goes away (| head) is exit 141, nothing printed', () => {
  for (const args of READERS)
    it(args.join(' '), async () => {
      const sb = newSandbox();
      // The reader is gone before agyctl writes (a FIFO whose only reader closed): no race with `head`.
      const fifo = path.join(sb.root, `fifo-${crypto.randomBytes(4).toString('hex')}`);
      await execa('mkfifo', [fifo]);
      const r = await execa(
        'bash',
        ['-c', 'exec 3<>"$F"; exec 4>"$F"; exec 3<&-; exec "$@" >&4', 'bash', ...AGYCTL_ARGV, ...args],
        {
          env: { ...sb.env, F: fifo },
          extendEnv: false,
          cwd: sb.root,
          reject: false,
          timeout: 60_000,
          stdin: 'ignore',
        },
      );
      expect({ exit: r.exitCode, stderr: String(r.stderr) }).toEqual({ exit: 141, stderr: '' });
      // And as a user pipes it: agyctl's own status, through pipefail.
      const piped = await execa(
        'bash',
        ['-o', 'pipefail', '-c', '"$@" | head -c 1 >/dev/null', 'bash', ...AGYCTL_ARGV, ...args],
        { env: sb.env, extendEnv: false, cwd: sb.root, reject: false, timeout: 60_000, stdin: 'ignore' },
      );
      expect(String(piped.stderr)).toBe('');
      expect([0, 141]).toContain(piped.exitCode);
    }, 60_000);
});
