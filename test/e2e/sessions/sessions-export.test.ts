/**
 * `sessions export` on the built binary with the simulator:
 * live and snapshot sources, Markdown and JSONL, files 0600 named by id,
 * `--json` describing what was written, and nothing left behind (no new
 * conversation, no process, no scratch dir), also after Ctrl-C.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { agyctl, BIN, parseJson, type Sandbox, spawnAgyctl, waitNoProcesses } from '../../helpers/cli.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';
import { changes, listTree } from '../../helpers/state-listing.js';

let sandbox: Sandbox | undefined;

const conv = (sb: Sandbox): string => path.join(sb.stateDir, 'conversations');

/** Live processes started from this sandbox (agyctl, and the server it gave a scratch HOME: both keep its TMPDIR). */
function sandboxProcesses(sb: Sandbox): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (/\) Z /.test(fs.readFileSync(`/proc/${name}/stat`, 'utf8'))) continue;
      if (fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`TMPDIR=${sb.root}`))
        found.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return found;
}
const leftovers = (sb: Sandbox): string[] => fs.readdirSync(sb.root).filter((n) => n.startsWith('agyctl-'));

function outDir(sb: Sandbox): string {
  const dir = path.join(sb.root, 'out');
  fs.mkdirSync(dir);
  return dir;
}

describe('sessions export', () => {
  it('from the live state dir: one 0600 Markdown file per session, --json says what was written, the live files stay as they were', async () => {
    sandbox = authedSandbox();
    const two = addConversation(sandbox, 2, '/work/two');
    const one = addConversation(sandbox, 1, '/work/one');
    const before = listTree(sandbox.stateDir);
    const out = outDir(sandbox);

    const r = await agyctl(['sessions', 'export', '--out', out, '--json'], sandbox);
    expect(r.exitCode).toBe(0);
    const doc = (parseJson(r.stdout) as any).export;
    expect(doc).toMatchObject({ source: 'live', format: 'md', out, failed: [] });
    const byId = Object.fromEntries(doc.sessions.map((s: any) => [s.id, s]));
    expect(byId[two]).toMatchObject({
      file: path.join(out, `${two}.md`),
      cwd: '/work/two',
      messages: 4,
      user: 2,
      agent: 2,
    });
    expect(byId[one]).toMatchObject({ file: path.join(out, `${one}.md`), cwd: '/work/one', messages: 2 });
    expect(fs.readdirSync(out).sort()).toEqual([`${one}.md`, `${two}.md`].sort());
    for (const f of fs.readdirSync(out)) expect(fs.statSync(path.join(out, f)).mode & 0o777).toBe(0o600);
    const md = fs.readFileSync(path.join(out, `${two}.md`), 'utf8');
    expect(md).toContain(`# Session ${two}`);
    expect(md).toContain('- cwd: `/work/two`');
    expect(md).toMatch(/## User \(1\)\n\nquestion 0\n\n## Agent \(2\)\n\nanswer 0\n/);
    expect(byId[two].bytes).toBe(Buffer.byteLength(md));

    expect(changes(before, listTree(sandbox.stateDir))).toEqual([]); // no new conversation, nothing touched
    expect(leftovers(sandbox)).toEqual([]);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('from a snapshot, as JSONL on stdout: a session line with cwd and times, then one line per message (role, text, index)', async () => {
    sandbox = authedSandbox();
    const id = addConversation(sandbox, 2);
    const b = await agyctl(['backup', '--to', path.join(sandbox.root, 'bk')], sandbox);
    expect(b.exitCode).toBe(0);
    fs.rmSync(path.join(conv(sandbox), `${id}.db`)); // gone from the live dir: only the snapshot has it

    const r = await agyctl(
      ['sessions', 'export', 'latest', '--from', path.join(sandbox.root, 'bk'), '--format', 'jsonl', '--out', '-'],
      sandbox,
    );
    expect(r.exitCode).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: 'session', id, cwd: '/work/sim' });
    expect(typeof lines[0].modified).toBe('string');
    expect(lines.slice(1)).toEqual([
      { type: 'message', session: id, index: 0, role: 'user', text: 'question 0' },
      { type: 'message', session: id, index: 1, role: 'agent', text: 'answer 0' },
      { type: 'message', session: id, index: 2, role: 'user', text: 'question 1' },
      { type: 'message', session: id, index: 3, role: 'agent', text: 'answer 1' },
    ]);
    expect(r.stderr).toContain('exported 1 session(s)');
    expect(leftovers(sandbox)).toEqual([]);
  });

  it('--session picks sessions; an existing file is refused before anything runs (exit 2), never overwritten', async () => {
    sandbox = authedSandbox();
    const a = addConversation(sandbox, 1);
    addConversation(sandbox, 1);
    const out = outDir(sandbox);
    const r = await agyctl(['sessions', 'export', '--session', a, '--out', out, '--format', 'jsonl'], sandbox);
    expect(r.exitCode).toBe(0);
    expect(fs.readdirSync(out)).toEqual([`${a}.jsonl`]);
    const first = fs.readFileSync(path.join(out, `${a}.jsonl`));
    const again = await agyctl(['sessions', 'export', '--session', a, '--out', out, '--format', 'jsonl'], sandbox);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toMatch(/already exist; agyctl never overwrites an export/);
    expect(fs.readFileSync(path.join(out, `${a}.jsonl`))).toEqual(first);
    expect(leftovers(sandbox)).toEqual([]);
  });

  it('an --out directory that cannot be written is named in the error, not the temporary file agyctl made there', async () => {
    sandbox = authedSandbox();
    addConversation(sandbox, 1);
    const ro = outDir(sandbox);
    await execa('mount', ['--bind', ro, ro], { timeout: 10_000 });
    try {
      await execa('mount', ['-o', 'remount,bind,ro', ro, ro], { timeout: 10_000 });
      const r = await agyctl(['sessions', 'export', '--out', ro, '--json'], sandbox, { timeoutMs: 60_000 });
      expect(r.exitCode, r.stderr).toBe(2);
      const error = (parseJson(r.stdout) as { error: { code: string; message: string; hint: string } }).error;
      expect(error.code).toBe('fs-read-only');
      expect(error.message).toContain(`${ro}: `);
      expect(`${error.message} ${error.hint}`).not.toMatch(/\.tmp\b/);
    } finally {
      await execa('umount', [ro], { timeout: 10_000, reject: false });
    }
  });

  it('a reader that goes away (`| head`) ends the export quietly: exit 141 as git, no stack trace, nothing left behind', async () => {
    sandbox = authedSandbox();
    for (let i = 0; i < 3; i += 1) addConversation(sandbox, 40, `/work/${i}`);
    const r = await execa(
      'bash',
      ['-o', 'pipefail', '-c', `node ${BIN} sessions export --format jsonl --out - | head -c 20 >/dev/null`],
      { env: sandbox.env, extendEnv: false, cwd: sandbox.root, reject: false, timeout: 45_000 },
    );
    expect(r.exitCode, r.stderr).toBe(141);
    expect(r.stderr).toBe('');
    expect(leftovers(sandbox)).toEqual([]);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
  });

  it('on a terminal shows what it is doing while it copies, starts the server and replays (never silent), each line cut to the width', async () => {
    sandbox = authedSandbox();
    addConversation(sandbox, 3);
    const out = path.join(sandbox.root, 'out');
    const r = await execa('script', ['-qec', `stty cols 80; node ${BIN} sessions export --out ${out}`, '/dev/null'], {
      env: sandbox.env,
      extendEnv: false,
      cwd: sandbox.root,
      reject: false,
      timeout: 45_000,
    });
    expect(r.exitCode, r.stdout).toBe(0);
    for (const phase of ['copying the live conversations', 'starting a fresh server to replay', 'replaying 1/1 '])
      expect(r.stdout).toContain(phase);
    // NO_COLOR is set (the sandbox's env): a redraw is a carriage return, never an escape sequence.
    expect(r.stdout).not.toContain('\x1b');
    const drawn = r.stdout
      .replace(/\r\n/g, '\n')
      .split('\r')
      .filter((d) => d.trim() !== '' && !d.includes('\n')); // status redraws, not the summary
    expect(drawn.length).toBeGreaterThan(3);
    for (const line of drawn) expect(Array.from(line).length, line).toBeLessThan(80);
  });

  it('--out DIR that does not exist is created (0700), as backup --to does', async () => {
    sandbox = authedSandbox();
    const id = addConversation(sandbox, 1);
    const out = path.join(sandbox.root, 'new', 'transcripts');
    const r = await agyctl(['sessions', 'export', '--out', out], sandbox);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fs.statSync(out).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(out)).toEqual([`${id}.md`]);
    const file = path.join(sandbox.root, 'a-file');
    fs.writeFileSync(file, '');
    const bad = await agyctl(['sessions', 'export', '--out', file], sandbox);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('is not a directory');
  });

  it('Ctrl-C while the server starts leaves nothing: exit 130, no output file, no scratch dir, no process', async () => {
    sandbox = authedSandbox({ AGY_SIM_STARTUP_MS: '20000' });
    addConversation(sandbox, 2);
    const before = listTree(sandbox.stateDir);
    const out = outDir(sandbox);
    const child = spawnAgyctl(['sessions', 'export', '--out', out], sandbox);
    const deadline = Date.now() + 20_000;
    // The server runs once some process besides agyctl has the sandbox's scratch HOME.
    while (Date.now() < deadline && sandboxProcesses(sandbox).length < 2) await new Promise((r) => setTimeout(r, 50));
    expect(sandboxProcesses(sandbox).length).toBeGreaterThanOrEqual(2);
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(String(r.stderr)).toContain(`Interrupted: nothing partial was left in ${out}`);
    expect(fs.readdirSync(out)).toEqual([]);
    expect(leftovers(sandbox)).toEqual([]);
    expect(await waitNoProcesses(sandbox)).toEqual([]);
    expect(sandboxProcesses(sandbox)).toEqual([]);
    expect(changes(before, listTree(sandbox.stateDir))).toEqual([]);
  });
});
