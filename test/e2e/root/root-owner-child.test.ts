/**
 * The child root starts to work in a user's state dir is the user's, and
 * the user is hostile to root (docs/security.md, "The owner's child"): as
 * OpenSSH's unprivileged child, it has no terminal of root's, none of root's
 * environment or cwd, and a deadline. A user created for the run owns the
 * state dir and attacks root's real runs: SIGUSR1 (Node's inspector), reading
 * /proc/PID/environ of every process they own, SIGSTOP; root runs from a
 * 0700 cwd as `sudo -i` leaves it in /root.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { execa, type ResultPromise } from 'execa';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  agyctl,
  agyctlArgv,
  makeSandbox,
  parseEvents,
  parseJson,
  type Sandbox,
  simPath,
  spawnAgyctl,
} from '../../helpers/cli.js';
import { EventStream } from '../../helpers/ndjson.js';
import { createUser, type OsUser, requireRoot } from '../../helpers/os-user.js';
import { useReadableApp } from '../../helpers/readable-app.js';
import { makeTaggedDb } from '../../helpers/tagged-db.js';
import { until } from '../../helpers/until.js';

beforeAll(useReadableApp);
requireRoot("the owner's child tests");

const A = '44444444-4444-4444-8444-444444444444';
/** What root's environment holds that no process of the user may see. */
const ROOTS_SECRETS = {
  AWS_SECRET_ACCESS_KEY: 'root-aws-secret',
  VAULT_TOKEN: 'root-vault-token',
  SSH_AUTH_SOCK: '/tmp/ssh-root/agent.1',
  GEMINI_API_KEY: 'root-gemini-key',
};

interface Box extends Sandbox {
  user: OsUser;
}

let box: Box | undefined;
afterEach(() => {
  box?.user.remove();
  box = undefined;
});

/** A sandbox whose home and state dir (with settings and one conversation) belong to a new user. */
function userBox(): Box {
  const sb = makeSandbox(ROOTS_SECRETS);
  fs.chmodSync(sb.root, 0o755);
  const user = createUser(sb.home);
  const conv = path.join(sb.stateDir, 'conversations');
  fs.mkdirSync(conv, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(sb.stateDir, 'settings.json'), '{"auth": {"type": "oauth-personal"}}\n', { mode: 0o600 });
  for (const d of [sb.home, path.dirname(sb.stateDir), sb.stateDir, conv, path.join(sb.stateDir, 'settings.json')])
    fs.chownSync(d, user.uid, user.gid);
  makeTaggedDb(path.join(conv, `${A}.db`), 'live', 50, user);
  box = Object.assign(sb, { user });
  return box;
}

/**
 * A process holding SQLite's EXCLUSIVE lock on `db` (a POSIX write lock on its shared range, as a
 * writer in locking_mode=EXCLUSIVE holds it), without opening it with SQLite: no file is made beside it.
 */
async function holdExclusive(db: string): Promise<{ process: ResultPromise }> {
  const script = [
    'import fcntl, os, sys',
    `fd = os.open(${JSON.stringify(db)}, os.O_RDWR)`,
    'fcntl.lockf(fd, fcntl.LOCK_EX, 510, 0x40000002, 0)',
    "print('locked', flush=True)",
    'sys.stdin.read()',
  ].join('\n');
  const holder = execa('python3', ['-c', script], { reject: false, stdin: 'pipe' });
  let said = '';
  holder.stdout?.on('data', (chunk: Buffer) => {
    said += String(chunk);
  });
  await until('the lock', 30_000, () => said.includes('locked'));
  return { process: holder }; // wrapped: an async function would await the process itself
}

/** A simulator that takes `ms` to answer: root's command runs that long at least. */
const slowServer = (ms: number): string => `env AGY_SIM_STARTUP_MS=${ms} node ${simPath()}`;

/** A directory only root can enter, as /root is. */
function rootsClosedDir(b: Box): string {
  const dir = path.join(b.root, 'rootcwd');
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  return dir;
}

interface Proc {
  pid: number;
  ppid: number;
  sid: number;
  ttyNr: number;
  uid: number;
}

function proc(pid: number): Proc | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const uid = Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return { pid, ppid: Number(f[1]), sid: Number(f[3]), ttyNr: Number(f[4]), uid };
  } catch {
    return undefined;
  }
}

function procs(): Proc[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => proc(Number(n)))
    .filter((p): p is Proc => p !== undefined);
}

/** The owner's child: the user's process whose parent is root's. */
function ownerChild(user: OsUser): Proc | undefined {
  return procs().find((p) => p.uid === user.uid && proc(p.ppid)?.uid === 0);
}

/** The terminals among a process's open descriptors. */
function ttyFds(pid: number): string[] {
  return fs
    .readdirSync(`/proc/${pid}/fd`)
    .map((fd) => {
      try {
        return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => /^\/dev\/(pts\/|tty)/.test(target));
}

/** Local ports in LISTEN owned by `uid` (IPv4 and IPv6). */
function listeningPorts(uid: number): number[] {
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' && Number(f[7]) === uid) ports.push(Number.parseInt(f[1]!.split(':').pop()!, 16));
    }
  }
  return ports;
}

/** The names in every environment of the user's processes (root can read them all), gathered until `run` ends. */
async function environsDuring(user: OsUser, run: Promise<unknown>): Promise<Map<number, string[]>> {
  const seen = new Map<number, string[]>();
  let done = false;
  void run.finally(() => {
    done = true;
  });
  while (!done) {
    gatherEnvirons(user, seen);
    await delay(20);
  }
  return seen;
}

function gatherEnvirons(user: OsUser, seen: Map<number, string[]>): void {
  for (const p of procs().filter((x) => x.uid === user.uid)) {
    try {
      const names = fs
        .readFileSync(`/proc/${p.pid}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((kv) => kv.slice(0, kv.indexOf('=')));
      seen.set(p.pid, names);
    } catch {
      /* gone */
    }
  }
}

function expectNoneOfRoots(seen: Map<number, string[]>, what: string): void {
  for (const [pid, names] of seen)
    for (const secret of Object.keys(ROOTS_SECRETS)) expect(names, `${what}: pid ${pid}`).not.toContain(secret);
}

const sq = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

/** Root's agyctl on a terminal (a pty from script(1)), as an admin runs it. */
function onTerminal(b: Box, args: string[], env: NodeJS.ProcessEnv): ResultPromise {
  return execa('script', ['-qec', [...agyctlArgv(), ...args].map(sq).join(' '), '/dev/null'], {
    env: { ...b.env, ...env },
    extendEnv: false,
    cwd: b.root,
    reject: false,
    timeout: 90_000,
  });
}

async function userProcessesGone(user: OsUser): Promise<number[]> {
  const until = Date.now() + 5_000;
  for (;;) {
    const left = procs().filter((p) => p.uid === user.uid);
    if (left.length === 0 || Date.now() > until) return left.map((p) => p.pid);
    await delay(20);
  }
}

describe("the owner's child holds nothing of root's", () => {
  it('SIGUSR1 while root runs check --live on a terminal: no inspector, no terminal, a session of its own', async () => {
    const b = userBox();
    const run = onTerminal(b, ['check', '--live', '--json'], { AGYCTL_SERVER: slowServer(4_000) });
    const child = await until('the owner child', 30_000, () => ownerChild(b.user));
    const root = proc(child.ppid)!;
    // Each is checked, whichever fails first.
    expect.soft(child.ttyNr, 'controlling terminal of the owner child').toBe(0);
    expect.soft(child.sid, "the owner child's session").not.toBe(root.sid);
    expect.soft(ttyFds(child.pid), "the owner child's terminal descriptors").toEqual([]);
    expect.soft(fs.readlinkSync(`/proc/${child.pid}/cwd`), "the owner child's cwd").toBe(b.home);
    process.kill(child.pid, 'SIGUSR1');
    const ports = new Set<number>();
    let done = false;
    void run.finally(() => {
      done = true;
    });
    while (!done) {
      for (const port of listeningPorts(b.user.uid)) ports.add(port);
      await delay(20);
    }
    const r = await run;
    expect.soft([...ports], 'ports the user listened on while root ran').not.toContain(9229);
    expect.soft(String(r.stdout), "root's terminal").not.toMatch(/Debugger|inspector/i);
    expect([0, 3], String(r.stdout)).toContain(r.exitCode);
  });

  it("no process of the user sees root's environment: check --live and login --detach", async () => {
    const b = userBox();
    const live = agyctl(['check', '--live', '--json'], b, {
      env: { AGYCTL_SERVER: slowServer(3_000) },
      timeoutMs: 60_000,
    });
    const duringCheck = await environsDuring(b.user, live);
    const checked = await live;
    expect([0, 3], checked.stderr).toContain(checked.exitCode);
    expect(duringCheck.size, 'processes of the user seen during check --live').toBeGreaterThanOrEqual(2);
    expectNoneOfRoots(duringCheck, 'check --live');

    const login = await agyctl(['login', '--detach', '--json', '--timeout', '60s'], b, { timeoutMs: 60_000 });
    expect(login.exitCode, `${login.stdout}${login.stderr}`).toBe(0);
    expect(parseEvents(login.stdout).map((e) => e.event)).toContain('detached');
    const afterLogin = new Map<number, string[]>();
    gatherEnvirons(b.user, afterLogin);
    expect(afterLogin.size, 'the supervisor and its server, as the user').toBeGreaterThanOrEqual(2);
    expectNoneOfRoots(afterLogin, 'login --detach');
    const cancel = await agyctl(['login', 'cancel', '--json'], b, { timeoutMs: 60_000 });
    expect(cancel.exitCode, cancel.stderr).toBe(0);
  });
});

describe("root from a cwd the owner cannot enter (sudo -i's /root)", () => {
  it('probe, check --live and login work; login --detach --trace FILE writes root its trace', async () => {
    const b = userBox();
    const cwd = rootsClosedDir(b);
    const probe = await agyctl(['probe', '--json'], b, { cwd, timeoutMs: 60_000 });
    expect(probe.exitCode, `${probe.stdout}${probe.stderr}`).toBe(0);
    const live = await agyctl(['check', '--live', '--json'], b, { cwd, timeoutMs: 60_000 });
    expect([0, 3], `${live.stdout}${live.stderr}`).toContain(live.exitCode);
    const login = await agyctl(['login', '--json', '--timeout', '3s'], b, { cwd, timeoutMs: 60_000 });
    expect(login.exitCode, `${login.stdout}${login.stderr}`).toBe(5);

    const detached = await agyctl(['login', '--detach', '--json', '--timeout', '60s', '--trace', 'trace.jsonl'], b, {
      cwd,
      timeoutMs: 60_000,
    });
    expect(detached.exitCode, `${detached.stdout}${detached.stderr}`).toBe(0);
    const cancel = await agyctl(['login', 'cancel', '--json'], b, { timeoutMs: 60_000 });
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    const trace = path.join(cwd, 'trace.jsonl');
    expect(fs.lstatSync(trace).uid).toBe(0);
    expect(fs.readFileSync(trace, 'utf8')).toMatch(/"method":"initialize"/);
  });

  it('a server command under that directory: the error names the directory, not the command', async () => {
    const b = userBox();
    const cwd = rootsClosedDir(b);
    const server = path.join(cwd, 'server.sh');
    fs.writeFileSync(server, `#!/bin/sh\nexec node ${simPath()} "$@"\n`, { mode: 0o755 });
    const r = await agyctl(['probe', '--json'], b, { cwd, env: { AGYCTL_SERVER: server }, timeoutMs: 60_000 });
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(2);
    const doc = parseJson(r.stdout) as { error: { code: string; message: string }; path: string };
    expect(doc.error.code).toBe('server-dir-closed');
    expect(doc.path).toBe(cwd);
    expect(doc.error.message).toContain(`${cwd} (owner uid 0, mode 0700)`);
  });
});

describe("root's deadline on the owner's child", () => {
  it('a SIGSTOPped child ends root backup at its --timeout (exit 5, owner-timeout), with every process of the user', async () => {
    const b = userBox();
    // The session held as a writer holds it: the child retries its copy until it is stopped, however fast the box.
    const holder = await holdExclusive(path.join(b.stateDir, 'conversations', `${A}.db`));
    try {
      const run = agyctl(
        ['backup', '--to', path.join(b.root, 'bk'), '--timeout', '3s', '--busy-timeout', '60s', '--json'],
        b,
        { timeoutMs: 60_000 },
      );
      const child = await until('the owner child', 30_000, () => ownerChild(b.user));
      process.kill(child.pid, 'SIGSTOP');
      const r = await run;
      expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(5);
      expect((parseJson(r.stdout).error as { code: string }).code).toBe('owner-timeout');
      expect(await userProcessesGone(b.user)).toEqual([]);
    } finally {
      holder.process.kill('SIGKILL');
      await holder.process;
    }
  });

  it('sessions takes --timeout as backup does: a live export whose server never answers ends at it (exit 5)', async () => {
    const b = userBox();
    const r = await execa(
      agyctlArgv()[0]!,
      [...agyctlArgv().slice(1), 'sessions', 'export', '--out', path.join(b.home, 'out'), '--timeout', '3s', '--json'],
      {
        env: { ...b.env, AGYCTL_SERVER: slowServer(60_000) },
        extendEnv: false,
        cwd: b.root,
        reject: false,
        timeout: 50_000,
      },
    );
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(5);
    expect(`${r.stdout}${r.stderr}`).toContain('owner-timeout');
    expect(await userProcessesGone(b.user)).toEqual([]);
  });

  it('Ctrl-C with the child stopped: root exits 130 and nothing of the user is left', async () => {
    const b = userBox();
    const run = execa(agyctlArgv()[0]!, [...agyctlArgv().slice(1), 'check', '--live', '--json'], {
      env: { ...b.env, AGYCTL_SERVER: slowServer(10_000) },
      extendEnv: false,
      cwd: b.root,
      reject: false,
      timeout: 30_000,
    });
    const child = await until('the owner child', 30_000, () => ownerChild(b.user));
    await until('its server', 30_000, () => procs().find((p) => p.uid === b.user.uid && p.ppid === child.pid));
    process.kill(child.pid, 'SIGSTOP');
    run.kill('SIGINT');
    const r = await run;
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(130);
    expect(await userProcessesGone(b.user)).toEqual([]);
  });
});

describe("root's terminal hangs up", () => {
  it('during an attached login: the child hears SIGHUP as it did on the terminal, and the login goes on as the user', async () => {
    const b = userBox();
    const run = spawnAgyctl(['login', '--json', '--timeout', '60s'], b, { timeoutMs: 60_000 });
    const events = new EventStream(run.stdout!);
    await events.waitFor('waiting', 30_000);
    run.kill('SIGHUP');
    const r = await run;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const status = await agyctl(['login', 'status', '--json'], b, { timeoutMs: 60_000 });
    expect((parseJson(status.stdout).login as { status: string }).status).toBe('pending');
    const cancel = await agyctl(['login', 'cancel', '--json'], b, { timeoutMs: 60_000 });
    expect(cancel.exitCode, cancel.stderr).toBe(0);
  });
});

describe('--trace as root', () => {
  it('a trace file the user created first is refused, not appended to', async () => {
    const b = userBox();
    const shared = path.join(b.root, 'shared');
    fs.mkdirSync(shared, { mode: 0o1777 });
    fs.chmodSync(shared, 0o1777);
    const trace = path.join(shared, 'trace.jsonl');
    fs.writeFileSync(trace, 'planted\n', { mode: 0o666 });
    fs.chownSync(trace, b.user.uid, b.user.gid);
    const r = await agyctl(['check', '--json', '--trace', trace], b, { timeoutMs: 60_000 });
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(2);
    expect((parseJson(r.stdout).error as { code: string }).code).toBe('trace-file-not-yours');
    expect(fs.readFileSync(trace, 'utf8')).toBe('planted\n');
  });
});

describe('--prometheus as root', () => {
  it('a file the user created first, or their link, is refused and left as it was (check, backup)', async () => {
    const b = userBox();
    const textfile = path.join(b.root, 'textfile');
    fs.mkdirSync(textfile, { mode: 0o1777 });
    fs.chmodSync(textfile, 0o1777);
    const prom = path.join(textfile, 'agyctl.prom');
    const runs = [
      ['check', '--json', '--prometheus', prom],
      ['backup', '--to', path.join(b.root, 'bk'), '--json', '--prometheus', prom],
    ];
    // A world-writable file of the user's: replacing it, root's metrics would take its mode 0666.
    fs.writeFileSync(prom, 'planted\n', { mode: 0o666 });
    fs.chmodSync(prom, 0o666);
    fs.chownSync(prom, b.user.uid, b.user.gid);
    for (const argv of runs) {
      const r = await agyctl(argv, b, { timeoutMs: 60_000 });
      expect(r.exitCode, `${argv[0]}: ${r.stdout}${r.stderr}`).toBe(2);
      expect((parseJson(r.stdout).error as { code: string }).code).toBe('prometheus-file-not-yours');
      expect(fs.readFileSync(prom, 'utf8')).toBe('planted\n');
      expect(fs.statSync(prom).uid).toBe(b.user.uid);
    }
    // A link to a root-only file: never followed, never replaced.
    const closed = rootsClosedDir(b);
    const rootsFile = path.join(closed, 'roots.prom');
    fs.writeFileSync(rootsFile, 'agyctl_backup_last_success_timestamp_seconds 42\n', { mode: 0o600 });
    fs.rmSync(prom);
    fs.symlinkSync(rootsFile, prom);
    fs.lchownSync(prom, b.user.uid, b.user.gid);
    for (const argv of runs) {
      const r = await agyctl(argv, b, { timeoutMs: 60_000 });
      expect(r.exitCode, `${argv[0]}: ${r.stdout}${r.stderr}`).toBe(2);
      expect((parseJson(r.stdout).error as { code: string }).code).toBe('unsafe-symlink');
      expect(fs.lstatSync(prom).isSymbolicLink()).toBe(true);
      expect(fs.readFileSync(rootsFile, 'utf8')).toBe('agyctl_backup_last_success_timestamp_seconds 42\n');
    }
    // A name nothing holds yet: root's file, 0644.
    fs.rmSync(prom);
    const ok = await agyctl(runs[0]!, b, { timeoutMs: 60_000 });
    expect(ok.exitCode, `${ok.stdout}${ok.stderr}`).not.toBe(2);
    expect(fs.statSync(prom)).toMatchObject({ uid: 0, mode: 0o100644 });
  });
});
