/**
 * A session is more than its database: the server's brain/<id>/ files (the
 * /plan flow writes its plan there) go through backup -> archive -> restore
 * byte for byte, nested directories included; a link or a FIFO planted there
 * is never followed, and is reported; verify catches a changed brain file;
 * restore keeps the brain directory it replaces; unchanged brain files are
 * reused by hard link.
 */

import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, parseJson, type Sandbox } from '../../helpers/cli.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';
import { Sim } from '../../sim/helpers.js';

const sims: Sim[] = [];
afterEach(async () => {
  for (const sim of sims.splice(0)) {
    sim.child.stdin!.end();
    await sim.exited;
  }
});

function box(): Sandbox {
  const sb = authedSandbox();
  return sb;
}

/** A session made by the simulator through a /plan prompt: its plan lands in brain/<id>/implementation_plan.md. */
async function planSession(sb: Sandbox): Promise<string> {
  const sim = new Sim(sb.home);
  sims.push(sim);
  await sim.result('initialize', { protocolVersion: 1 });
  const { sessionId } = await sim.result('session/new', { cwd: '/work/party', mcpServers: [] });
  await sim.result('session/prompt', {
    sessionId,
    prompt: [{ type: 'text', text: '/plan Organize a birthday party' }],
  });
  await sim.result('session/close', { sessionId });
  return sessionId as string;
}

/** Every regular file under dir, relative path -> sha256 (links and FIFOs listed by kind, never read). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string): void => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(p);
      if (st.isDirectory()) walk(p, r);
      else if (st.isFile()) out[r] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
      else out[r] = st.isSymbolicLink() ? 'symlink' : 'special';
    }
  };
  if (fs.existsSync(dir)) walk(dir, '');
  return out;
}

describe('brain/<id>/ is part of the session', () => {
  it('survives backup -> archive -> restore byte for byte; a planted link and a FIFO are skipped and reported', async () => {
    const from = box();
    const id = await planSession(from);
    const brain = path.join(from.stateDir, 'brain', id);
    expect(fs.readFileSync(path.join(brain, 'implementation_plan.md'), 'utf8')).toContain('birthday party');
    fs.mkdirSync(path.join(brain, 'notes', 'deep'), { recursive: true });
    fs.writeFileSync(path.join(brain, 'notes', 'deep', 'data.bin'), crypto.randomBytes(70_000));
    fs.writeFileSync(path.join(brain, 'notes', 'task.md'), '- [ ] cake\n');
    const secret = path.join(from.root, 'secret.txt');
    fs.writeFileSync(secret, 'not the session');
    fs.symlinkSync(secret, path.join(brain, 'notes', 'escape.md'));
    execFileSync('mkfifo', [path.join(brain, 'pipe')]);
    const before = tree(brain);

    const tar = path.join(from.root, 'agy.tar');
    const made = await agyctl(['backup', '--to', path.join(from.root, 'bk'), '--archive', tar, '--json'], from);
    expect(made.exitCode, made.stderr).toBe(0);
    expect(made.stderr).toMatch(new RegExp(`brain/${id}/notes/escape.md skipped: symbolic link; not followed`));
    expect(made.stderr).toMatch(new RegExp(`brain/${id}/pipe skipped: not a regular file`));
    const session = (parseJson(made.stdout) as any).sessions[0];
    expect(session.brain.files).toBe(3);
    expect(session.brain.skipped.map((s: any) => s.path).sort()).toEqual(['notes/escape.md', 'pipe']);
    const listing = (await execa('tar', ['tf', tar])).stdout.split('\n');
    expect(listing).toEqual(
      expect.arrayContaining([
        `brain/${id}/implementation_plan.md`,
        `brain/${id}/notes/deep/data.bin`,
        `brain/${id}/notes/task.md`,
      ]),
    );
    expect(listing.join('\n')).not.toMatch(/escape|pipe|secret/);

    const to = box();
    // Another box's state dir: restored on purpose.
    const dry = await agyctl(['restore', '--archive', tar, '--dry-run', '--json', '--from-other-source'], to);
    expect(dry.exitCode).toBe(0);
    expect((parseJson(dry.stdout) as any).restorePlan.sessions[0]).toMatchObject({ id, brainFiles: 3 });
    const r = await agyctl(['restore', '--archive', tar, '--json', '--from-other-source'], to);
    expect(r.exitCode, r.stderr).toBe(0);
    expect((parseJson(r.stdout) as any).restore.sessions[0]).toMatchObject({ id, restored: true, brainFiles: 3 });
    const back = tree(path.join(to.stateDir, 'brain', id));
    const { 'notes/escape.md': _link, pipe: _fifo, ...regular } = before;
    expect(back).toEqual(regular);
    expect(fs.statSync(path.join(to.stateDir, 'brain', id, 'notes', 'task.md')).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(secret, 'utf8')).toBe('not the session');
  });

  it('verify catches a changed brain file; restore keeps the brain directory it replaces', async () => {
    const sb = box();
    const id = addConversation(sb, 1);
    const brain = path.join(sb.stateDir, 'brain', id);
    fs.mkdirSync(brain, { recursive: true });
    fs.writeFileSync(path.join(brain, 'implementation_plan.md'), 'plan v1\n');
    const bk = path.join(sb.root, 'bk');
    expect((await agyctl(['backup', '--to', bk], sb)).exitCode).toBe(0);
    const verified = await agyctl(['backup', 'verify', 'latest', '--from', bk], sb);
    expect(verified.exitCode, verified.stdout).toBe(0);

    fs.writeFileSync(path.join(brain, 'implementation_plan.md'), 'plan v2, edited by the agent\n');
    const r = await agyctl(['restore', 'latest', '--from', bk, '--json'], sb);
    expect(r.exitCode, r.stderr).toBe(0);
    const restored = (parseJson(r.stdout) as any).restore.sessions[0];
    expect(fs.readFileSync(path.join(brain, 'implementation_plan.md'), 'utf8')).toBe('plan v1\n');
    expect(restored.brainPreRestore).toMatch(new RegExp(`brain/${id}\\.pre-restore-`));
    expect(fs.readFileSync(path.join(restored.brainPreRestore, 'implementation_plan.md'), 'utf8')).toBe(
      'plan v2, edited by the agent\n',
    );

    const snap = fs.readdirSync(bk).find((n) => !n.startsWith('.'))!;
    fs.appendFileSync(path.join(bk, snap, 'brain', id, 'implementation_plan.md'), 'tampered');
    const bad = await agyctl(['backup', 'verify', 'latest', '--from', bk], sb);
    expect(bad.exitCode).toBe(6);
    expect(bad.stdout).toMatch(new RegExp(`BAD +${id}: brain/${id}/implementation_plan.md: .*bytes`));
  });

  it("a brain directory that holds the snapshot's files keeps no pre-restore copy; at most 3 copies are kept", async () => {
    const sb = box();
    const id = addConversation(sb, 1);
    const brain = path.join(sb.stateDir, 'brain', id);
    fs.mkdirSync(brain, { recursive: true });
    fs.writeFileSync(path.join(brain, 'implementation_plan.md'), 'plan v1\n');
    const bk = path.join(sb.root, 'bk');
    expect((await agyctl(['backup', '--to', bk], sb)).exitCode).toBe(0);
    const copies = (): string[] =>
      fs.readdirSync(path.join(sb.stateDir, 'brain')).filter((n) => n.startsWith(`${id}.pre-restore-`));

    const dry = await agyctl(['restore', 'latest', '--from', bk, '--dry-run', '--json'], sb);
    expect((parseJson(dry.stdout) as any).restorePlan.sessions[0]).toMatchObject({ id, sameBrain: true });
    const same = await agyctl(['restore', 'latest', '--from', bk, '--json'], sb);
    expect(same.exitCode, same.stderr).toBe(0);
    expect((parseJson(same.stdout) as any).restore.sessions[0].brainPreRestore).toBeNull();
    expect(copies()).toEqual([]);

    for (let i = 0; i < 5; i += 1) {
      fs.writeFileSync(path.join(brain, 'implementation_plan.md'), `plan v${i + 2}, edited\n`);
      const r = await agyctl(['restore', 'latest', '--from', bk], sb);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(fs.readFileSync(path.join(brain, 'implementation_plan.md'), 'utf8')).toBe('plan v1\n');
    }
    const kept = copies().sort();
    expect(kept).toHaveLength(3);
    // The newest three: the last edits.
    const newest = kept.map((n) =>
      fs.readFileSync(path.join(sb.stateDir, 'brain', n, 'implementation_plan.md'), 'utf8'),
    );
    expect(newest).toEqual(['plan v4, edited\n', 'plan v5, edited\n', 'plan v6, edited\n']);
  });

  it('reuses unchanged brain files by hard link, like databases', async () => {
    const sb = box();
    const id = addConversation(sb, 1);
    const brain = path.join(sb.stateDir, 'brain', id);
    fs.mkdirSync(brain, { recursive: true });
    const plan = path.join(brain, 'implementation_plan.md');
    fs.writeFileSync(plan, 'plan\n');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(plan, old, old);
    const bk = path.join(sb.root, 'bk');
    expect((await agyctl(['backup', '--to', bk], sb)).exitCode).toBe(0);
    const second = await agyctl(['backup', '--to', bk, '--json'], sb);
    expect(second.exitCode).toBe(0);
    const snaps = fs
      .readdirSync(bk)
      .filter((n) => !n.startsWith('.'))
      .sort();
    const inode = (snap: string): number => fs.statSync(path.join(bk, snap, 'brain', id, 'implementation_plan.md')).ino;
    expect(snaps).toHaveLength(2);
    expect(inode(snaps[1]!)).toBe(inode(snaps[0]!));
  });
});
