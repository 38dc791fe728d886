/**
 * Every command that takes a snapshot name (found in the help tree: a
 * `<snapshot>` or `[snapshot]` argument; today restore, backup verify and
 * sessions export) answers a wrong one the same way, with and without
 * --json: a name that does not exist lists the snapshots there are (in a
 * backup dir with none, names `backup list --from DIR`); an archive where a
 * directory belongs is named as one, with --archive suggested, also as the
 * backup directory of every command that takes `--from <dir>` (backup list
 * too); `DIR/latest` is the newest snapshot in DIR, and a DIR the user
 * cannot read is that error (EACCES), never a path glued under the backup
 * dir. A snapshot from a newer agyctl gets one exit code and one message in
 * every command, as a directory and as an archive (where the command takes
 * `--archive`, which names a snapshot directory given to it as one). A new
 * command with a snapshot argument or `--from` and no row in HOW fails the
 * guard, naming it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agyctl, agyctlArgv, makeSandbox, parseJson, type RunResult, type Sandbox } from '../../helpers/cli.js';
import { helpTree, sectionOf, type TreeCommand, usageOf } from '../../helpers/help-tree.js';
import { createUser, requireRoot } from '../../helpers/os-user.js';
import { useReadableApp } from '../../helpers/readable-app.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';

async function withSnapshot(): Promise<{ sb: Sandbox; bk: string; name: string }> {
  const sb = authedSandbox();
  addConversation(sb, 1);
  const bk = path.join(sb.root, 'bk');
  const r = await agyctl(['backup', '--to', bk, '--json'], sb);
  expect(r.exitCode, r.stderr).toBe(0);
  return { sb, bk, name: path.basename((parseJson(r.stdout) as any).snapshot.path as string) };
}

/**
 * How to run each command that takes a snapshot or a backup dir cheaply, changing nothing: the words after
 * the snapshot (`json`: in --json mode, where `sessions export --out -` would be refused).
 */
const HOW: Record<string, { after: (json: boolean) => string[]; snapshot: boolean }> = {
  restore: { after: () => ['--dry-run'], snapshot: true },
  'backup verify': { after: () => [], snapshot: true },
  'sessions export': { after: (json) => ['--out', json ? 'out' : '-'], snapshot: true },
  'backup list': { after: () => [], snapshot: false },
};

interface Taker {
  words: string[];
  /** A SNAPSHOT argument (else only `--from <dir>`). */
  snapshot: boolean;
  /** Takes `--archive <file…>` to read. */
  archive: boolean;
}

/** The commands of the help tree with a snapshot argument or a `--from <dir>` option. */
function takersOf(tree: TreeCommand[]): Taker[] {
  const options = (cmd: TreeCommand): string => sectionOf(cmd.help, 'Options:').join('\n');
  return tree
    .map((cmd) => ({
      words: cmd.path,
      snapshot: /[<[]snapshot[>\]]/.test(usageOf(cmd)),
      from: /^ {2}--from <dir>/m.test(options(cmd)),
      archive: /^ {2}--archive <file/m.test(options(cmd)),
    }))
    .filter((t) => t.snapshot || t.from)
    .map(({ words, snapshot, archive }) => ({ words, snapshot, archive }));
}

let takers: Taker[] = [];
let walker: Sandbox;
beforeAll(async () => {
  walker = makeSandbox();
  takers = takersOf(await helpTree(walker));
}, 120_000);
afterAll(() => walker?.cleanup());

const snapshotTakers = (): Taker[] => takers.filter((t) => t.snapshot);
const how = (t: Taker) => HOW[t.words.join(' ')]!;
const withArg = (t: Taker, arg: string, bk: string, json = false): string[] => [
  ...t.words,
  arg,
  ...how(t).after(json),
  '--from',
  bk,
  ...(json ? ['--json'] : []),
];

/** The one JSON document of a --json failure: nothing on stderr, nothing after the document. */
function jsonError(r: RunResult): { code: string; exit: number; message: string; hint?: string } {
  expect(r.stderr, r.stdout).toBe('');
  return (parseJson(r.stdout) as { error: { code: string; exit: number; message: string; hint?: string } }).error;
}

describe('the commands that take a snapshot or a backup dir', () => {
  it('are found in the help tree, and each has a row in HOW', () => {
    const names = takers.map((t) => t.words.join(' '));
    expect(names).toEqual(expect.arrayContaining(['restore', 'backup verify', 'backup list']));
    expect(
      names.filter((name) => !(name in HOW)),
      'commands with no row in HOW',
    ).toEqual([]);
    expect(
      Object.keys(HOW).filter((name) => !names.includes(name)),
      'rows for commands the tree lacks',
    ).toEqual([]);
    for (const t of takers) expect(how(t).snapshot, t.words.join(' ')).toBe(t.snapshot);
    expect(takers.filter((t) => t.archive).map((t) => t.words.join(' '))).toContain('restore');
  });
});

describe('a snapshot name that does not exist', () => {
  it('lists the snapshots there are, in every command that takes one (exit 2)', async () => {
    const { sb, bk, name } = await withSnapshot();
    for (const t of snapshotTakers()) {
      const cmd = t.words;
      const r = await agyctl(withArg(t, '2026-01-01T00-00-00.000Z', bk), sb);
      expect(r.exitCode, `${cmd.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, cmd.join(' ')).toMatch(/^error: No snapshot 2026-01-01T00-00-00\.000Z/);
      expect(r.stderr, cmd.join(' ')).toContain(`hint: the snapshots in ${bk} are: ${name}`);
      expect(r.stderr, cmd.join(' ')).toContain('agyctl backup list');
      const json = await agyctl(withArg(t, '2026-01-01T00-00-00.000Z', bk, true), sb);
      expect(json.exitCode, cmd.join(' ')).toBe(2);
      const err = jsonError(json);
      expect(err.message, cmd.join(' ')).toMatch(/^No snapshot 2026-01-01T00-00-00\.000Z/);
      expect(err.hint, cmd.join(' ')).toContain(`the snapshots in ${bk} are: ${name}`);
      expect(err.hint, cmd.join(' ')).toContain('agyctl backup list');
    }
  });

  it('in a backup dir with no snapshot, names `backup list --from DIR`, in every command (exit 2)', async () => {
    const { sb } = await withSnapshot();
    const empty = path.join(sb.root, 'empty');
    fs.mkdirSync(empty);
    for (const t of snapshotTakers())
      for (const json of [false, true]) {
        const r = await agyctl(withArg(t, 'nosuch', empty, json), sb);
        const hint = json ? jsonError(r).hint : r.stderr;
        expect(r.exitCode, `${t.words.join(' ')}: ${r.stdout}${r.stderr}`).toBe(2);
        expect(hint, t.words.join(' ')).toContain(`there is no snapshot in ${empty}`);
        expect(hint, t.words.join(' ')).toContain('`agyctl backup list --from DIR`');
      }
  });

  it('a snapshot directory given to --archive is named as one, with the way to restore it', async () => {
    const { sb, bk, name } = await withSnapshot();
    const dir = path.join(bk, name);
    for (const t of takers.filter((taker) => taker.archive)) {
      const r = await agyctl([...t.words, '--archive', dir, ...how(t).after(false)], sb);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`error: --archive ${dir} is a directory, not an archive file.`);
      expect(r.stderr).toContain(`agyctl ${t.words.join(' ')} ${dir}`);
    }
  });

  it('an archive where a directory belongs is named as one, with --archive suggested', async () => {
    const { sb, bk } = await withSnapshot();
    const tar = path.join(sb.root, 'snap.tar');
    expect((await agyctl(['backup', '--to', bk, '--archive', tar], sb)).exitCode).toBe(0);
    for (const t of snapshotTakers()) {
      const cmd = t.words;
      const r = await agyctl(withArg(t, tar, bk), sb);
      expect(r.exitCode, cmd.join(' ')).toBe(2);
      expect(r.stderr, cmd.join(' ')).toContain(`error: ${tar} is a file (an archive?), not a snapshot directory.`);
      expect(r.stderr, cmd.join(' ')).toContain(`--archive ${tar}`);
      const json = await agyctl(withArg(t, tar, bk, true), sb);
      expect(json.exitCode, cmd.join(' ')).toBe(2);
      const err = jsonError(json);
      expect(err.message, cmd.join(' ')).toBe(`${tar} is a file (an archive?), not a snapshot directory.`);
      expect(err.hint, cmd.join(' ')).toContain(`--archive ${tar}`);
    }
  });

  it('an archive given as the backup dir (--from) is named as one, with --archive suggested, in every command', async () => {
    const { sb, bk } = await withSnapshot();
    const tar = path.join(sb.root, 'snap.tar');
    expect((await agyctl(['backup', '--to', bk, '--archive', tar], sb)).exitCode).toBe(0);
    const wrong: string[] = [];
    for (const t of takers)
      for (const json of [false, true]) {
        const argv = [...t.words, ...(t.snapshot ? ['latest'] : []), ...how(t).after(json), '--from', tar];
        const r = await agyctl([...argv, ...(json ? ['--json'] : [])], sb);
        const said = json ? r.stdout : r.stderr;
        if (
          r.exitCode !== 2 ||
          !said.includes(`${tar} is a file (an archive?), not a backup directory.`) ||
          !said.includes(`--archive ${tar}`)
        )
          wrong.push(`${argv.join(' ')}${json ? ' --json' : ''}: exit ${r.exitCode}, ${said.trim()}`);
      }
    expect(wrong).toEqual([]);
  });

  it('DIR/latest is the newest snapshot in DIR, not "latest" glued under the backup dir', async () => {
    const { sb, bk, name } = await withSnapshot();
    const r = await agyctl(['restore', path.join(bk, 'latest'), '--dry-run'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(path.join(bk, name));
  });
});

describe('as a user, a backup dir under /root', () => {
  it('is the permission error it is (exit 2, fs-permission-denied), not "No snapshot"', async () => {
    requireRoot('these tests');
    await useReadableApp();
    const { sb, bk } = await withSnapshot();
    const user = createUser(sb.home);
    try {
      const hidden = path.join(sb.root, 'private');
      fs.mkdirSync(hidden, { mode: 0o700 });
      fs.renameSync(bk, path.join(hidden, 'bk'));
      fs.chmodSync(sb.root, 0o755);
      const userHome = path.join(sb.root, 'u');
      fs.mkdirSync(userHome);
      fs.chownSync(userHome, user.uid, user.gid);
      const r = await execa(
        agyctlArgv()[0]!,
        [...agyctlArgv().slice(1), 'restore', path.join(hidden, 'bk', 'latest'), '--dry-run', '--json'],
        {
          env: { ...sb.env, HOME: userHome },
          extendEnv: false,
          uid: user.uid,
          gid: user.gid,
          cwd: userHome,
          reject: false,
          timeout: 30_000,
        },
      );
      expect(r.exitCode, String(r.stderr)).toBe(2);
      const err = (parseJson(String(r.stdout)) as any).error;
      expect(err.code).toBe('fs-permission-denied');
      expect(err.message).toContain(path.join(hidden, 'bk'));
      expect(err.message).not.toContain(path.join(userHome, '.local'));
    } finally {
      user.remove();
    }
  });
});

describe('a snapshot from a newer agyctl', () => {
  it('gets one exit code and one message, as a directory and as an archive', async () => {
    const { sb, bk, name } = await withSnapshot();
    const tar = path.join(sb.root, 'snap.tar');
    expect((await agyctl(['backup', '--to', bk, '--archive', tar], sb)).exitCode).toBe(0);
    const manifest = path.join(bk, name, 'manifest.json');
    fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').replace(/"schemaVersion": \d+/, '"schemaVersion": 9'));
    const bytes = fs.readFileSync(tar);
    const at = bytes.indexOf('"schemaVersion": ');
    expect(at).toBeGreaterThan(0);
    bytes.write('9', at + '"schemaVersion": '.length);
    fs.writeFileSync(tar, bytes);

    const dir = await agyctl(['restore', path.join(bk, name), '--dry-run', '--json'], sb);
    const archive = await agyctl(['restore', '--archive', tar, '--dry-run', '--json'], sb);
    for (const r of [dir, archive]) {
      expect(r.exitCode, r.stdout).toBe(2);
      const err = (parseJson(r.stdout) as any).error;
      expect(err.message).toMatch(/manifest\.json has schemaVersion 9; this agyctl reads \d+$/);
      expect(err.hint).toBe('use a newer agyctl to read this snapshot');
    }
    expect((parseJson(dir.stdout) as any).error.code).toBe((parseJson(archive.stdout) as any).error.code);
  });

  it('is the same exit code and message in every command that takes a snapshot, with and without --json', async () => {
    const { sb, bk } = await withSnapshot();
    const tar = path.join(sb.root, 'snap.tar');
    expect((await agyctl(['backup', '--to', bk, '--archive', tar], sb)).exitCode).toBe(0);
    // The newest snapshot, so that `latest` is it too.
    const name = fs.readdirSync(bk).sort().at(-1)!;
    const manifest = path.join(bk, name, 'manifest.json');
    fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').replace(/"schemaVersion": \d+/, '"schemaVersion": 9'));
    const bytes = fs.readFileSync(tar);
    bytes.write('9', bytes.indexOf('"schemaVersion": ') + '"schemaVersion": '.length);
    fs.writeFileSync(tar, bytes);

    /** What a command said, with the manifest's name (a path, or "the archive's") made one. */
    const answers: Record<string, string> = {};
    const answer = async (argv: string[], json: boolean): Promise<void> => {
      const r = await agyctl([...argv, ...(json ? ['--json'] : [])], sb);
      const err = json ? jsonError(r) : undefined;
      const said = err
        ? `${err.code}: ${err.message} / ${err.hint}`
        : r.stderr.trim().replace(/^error: |\nhint: /g, ' / ');
      answers[`${argv.join(' ')}${json ? ' --json' : ''}`] = `exit ${r.exitCode}: ${said}`
        .replace(manifest, 'MANIFEST')
        .replace("the archive's manifest.json", 'MANIFEST');
    };
    for (const t of snapshotTakers())
      for (const json of [false, true]) {
        await answer([...t.words, path.join(bk, name), ...how(t).after(json)], json);
        await answer([...t.words, 'latest', '--from', bk, ...how(t).after(json)], json);
        if (t.archive) await answer([...t.words, '--archive', tar, ...how(t).after(json)], json);
      }
    const shown = JSON.stringify(answers, null, 1);
    const text = Object.entries(answers).filter(([argv]) => !argv.endsWith('--json'));
    const json = Object.entries(answers).filter(([argv]) => argv.endsWith('--json'));
    expect(text.length).toBeGreaterThan(5);
    // One answer per mode, whatever the command and however the snapshot was named.
    expect(new Set(text.map(([, said]) => said)).size, shown).toBe(1);
    expect(new Set(json.map(([, said]) => said)).size, shown).toBe(1);
    expect(text[0]![1]).toMatch(
      /^exit 2: {2}\/ MANIFEST has schemaVersion 9; this agyctl reads \d+ \/ use a newer agyctl/,
    );
    expect(json[0]![1]).toMatch(
      /^exit 2: usage: MANIFEST has schemaVersion 9; this agyctl reads \d+ \/ use a newer agyctl/,
    );

    // backup list shows it with the same words.
    const list = await agyctl(['backup', 'list', '--from', bk, '--json'], sb);
    expect(list.exitCode, list.stderr).toBe(0);
    const listed = (parseJson(list.stdout) as { snapshots: Array<{ name: string; problem: string | null }> }).snapshots;
    expect(listed.find((s) => s.name === name)).toMatchObject({
      problem: expect.stringMatching(/manifest\.json has schemaVersion 9; this agyctl reads \d+$/),
      problemKind: 'newer',
    });
    // ... and its text gives restore's fix, not a damaged manifest's.
    const rows = await agyctl(['backup', 'list', '--from', bk], sb);
    const row = rows.stdout.split('\n').find((l) => l.startsWith(name));
    expect(row, rows.stdout).toMatch(/written by a newer agyctl: use a newer agyctl to read this snapshot$/);
    expect(rows.stdout).not.toMatch(/unreadable|damaged/);
  });
});
