/**
 * agyctl settings on the built binary. "The server accepts it" is checked
 * against the simulator itself, started afterwards from the same HOME, over
 * a raw JSON-RPC exchange: initialize, then session/new without authenticate.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agyctl,
  makeSandbox,
  parseJson,
  type Sandbox,
  SIM,
  waitNoProcesses,
  writeSettings,
} from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;
let sim: SimServer | undefined;
afterEach(async () => {
  sim?.kill();
  sim = undefined;
  if (sandbox) expect(await waitNoProcesses(sandbox)).toEqual([]);
  sandbox = undefined;
});

interface RpcReply {
  id?: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** The simulator on pipes, in the sandbox's HOME; every wait has a deadline. */
class SimServer {
  readonly child: ChildProcessWithoutNullStreams;
  private readonly replies = new Map<number, RpcReply>();
  private readonly waiters = new Map<number, (r: RpcReply) => void>();
  private nextId = 0;

  constructor(sb: Sandbox, env: NodeJS.ProcessEnv = {}) {
    this.child = spawn('node', [SIM], { env: { ...sb.env, ...env }, cwd: sb.root, stdio: 'pipe' });
    readline.createInterface({ input: this.child.stdout }).on('line', (line) => {
      let msg: RpcReply;
      try {
        msg = JSON.parse(line) as RpcReply;
      } catch {
        return; // not JSON: not ours to judge here
      }
      if (typeof msg.id !== 'number') return;
      const waiter = this.waiters.get(msg.id);
      if (waiter) waiter(msg);
      else this.replies.set(msg.id, msg);
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  request(method: string, params: Record<string, unknown>, timeoutMs = 15_000): Promise<RpcReply> {
    const id = this.nextId++;
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply to ${method} within ${timeoutMs} ms`)), timeoutMs);
      const done = (r: RpcReply): void => {
        clearTimeout(timer);
        this.waiters.delete(id);
        resolve(r);
      };
      const early = this.replies.get(id);
      if (early) done(early);
      else this.waiters.set(id, done);
    });
  }

  /** initialize, then session/new straight away (no authenticate). */
  async newSessionWithoutAuthenticate(cwd: string): Promise<RpcReply> {
    const init = await this.request('initialize', {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    expect(init.result?.protocolVersion).toBe(1);
    return this.request('session/new', { cwd, mcpServers: [] });
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

const settingsFile = (sb: Sandbox): string => path.join(sb.stateDir, 'settings.json');
const readText = (sb: Sandbox): string => fs.readFileSync(settingsFile(sb), 'utf8');

async function showJson(sb: Sandbox, env: NodeJS.ProcessEnv = {}): Promise<Record<string, unknown>> {
  const r = await agyctl(['settings', 'show', '--json'], sb, { env });
  expect(r.exitCode, r.stderr).toBe(0);
  return parseJson(r.stdout);
}

describe('settings set-auth: each type written, re-read, and used by a server started afterwards', () => {
  const cases: Array<{
    type: string;
    args: string[];
    env: NodeJS.ProcessEnv;
    written: Record<string, unknown>;
    accepted: boolean;
  }> = [
    {
      type: 'gemini-api-key',
      args: [],
      env: { GEMINI_API_KEY: 'test-key-not-real' },
      written: { auth: { type: 'gemini-api-key' } },
      accepted: true,
    },
    {
      type: 'agent-platform',
      args: ['--project', 'my-proj', '--location', 'us-central1'],
      env: {},
      written: { auth: { type: 'agent-platform' }, gcp: { project: 'my-proj', location: 'us-central1' } },
      accepted: true,
    },
    {
      type: 'vertex-ai',
      args: ['--project', 'p-1', '--location', 'global'],
      env: {},
      written: { auth: { type: 'agent-platform' }, gcp: { project: 'p-1', location: 'global' } },
      accepted: true,
    },
    // OAuth types need a login (a token file) on top of settings: session/new still asks for authentication.
    { type: 'oauth-personal', args: [], env: {}, written: { auth: { type: 'oauth-personal' } }, accepted: false },
    {
      type: 'oauth-business',
      args: ['--project', 'biz', '--location', 'europe-west4'],
      env: {},
      written: { auth: { type: 'oauth-business' }, gcp: { project: 'biz', location: 'europe-west4' } },
      accepted: false,
    },
  ];

  it.each(cases)('$type', async ({ type, args, env, written, accepted }) => {
    sandbox = makeSandbox();
    const set = await agyctl(['settings', 'set-auth', type, ...args], sandbox, { env });
    expect(set.exitCode, set.stderr).toBe(0);
    expect(JSON.parse(readText(sandbox))).toEqual(written);
    expect(fs.statSync(settingsFile(sandbox)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(sandbox.stateDir).mode & 0o777).toBe(0o700);
    if (type === 'vertex-ai') expect(set.stderr).toContain('"vertex-ai" is the old name of agent-platform');

    const shown = (await showJson(sandbox, env)).settings as Record<string, unknown>;
    expect(shown).toMatchObject({ exists: true, mode: '0600', authType: (written.auth as { type: string }).type });
    expect((await agyctl(['settings', 'validate'], sandbox, { env })).exitCode).toBe(0);

    sim = new SimServer(sandbox, env);
    const reply = await sim.newSessionWithoutAuthenticate(sandbox.root);
    if (accepted) expect(reply.result?.sessionId, JSON.stringify(reply)).toMatch(/^[0-9a-f-]{36}$/);
    else expect(reply.error?.message).toBe('Authentication required');
  });

  it('gemini-api-key without GEMINI_API_KEY in the server environment is refused, and agyctl said where to set it', async () => {
    sandbox = makeSandbox();
    const set = await agyctl(['settings', 'set-auth', 'gemini-api-key'], sandbox);
    expect(set.exitCode).toBe(0);
    expect(set.stderr).toContain('GEMINI_API_KEY');
    expect(set.stderr).toContain('not set in this shell');
    expect(set.stderr).toContain('Environment=GEMINI_API_KEY=');
    expect(set.stderr).toContain('EnvironmentFile=');
    sim = new SimServer(sandbox);
    expect((await sim.newSessionWithoutAuthenticate(sandbox.root)).error?.message).toBe('Authentication required');
  });

  it('never prints or writes a secret', async () => {
    sandbox = makeSandbox();
    const env = { GEMINI_API_KEY: 'AIzaSECRETVALUE', GOOGLE_API_KEY: 'AIzaOTHERSECRET' };
    const outputs = [
      await agyctl(['settings', 'set-auth', 'gemini-api-key'], sandbox, { env }),
      await agyctl(['settings', 'show'], sandbox, { env }),
      await agyctl(['settings', 'show', '--json'], sandbox, { env }),
      await agyctl(['settings', 'set-auth', 'agent-platform', '--json'], sandbox, { env }),
      await agyctl(['settings', 'validate', '--json'], sandbox, { env }),
    ];
    for (const r of outputs) expect(r.stdout + r.stderr).not.toMatch(/SECRET/);
    expect(readText(sandbox)).not.toMatch(/SECRET/);
    const env0 = (parseJson(outputs[2]!.stdout).env as Array<Record<string, unknown>>)[0];
    expect(env0).toMatchObject({ name: 'GEMINI_API_KEY', set: true, secret: true });
  });
});

describe('settings: bad input leaves the file byte for byte', () => {
  const original = '{\n  "auth": { "type": "oauth-personal" },\n  "ui": {"theme": "dark"}, "n": 1.50\n}\n';
  const bad: Array<[string, string[], NodeJS.ProcessEnv]> = [
    ['unknown type', ['set-auth', 'api-key'], {}],
    ['oauth-business without project/location', ['set-auth', 'oauth-business'], {}],
    ['oauth-business without location', ['set-auth', 'oauth-business', '--project', 'p'], {}],
    ['agent-platform with nothing', ['set-auth', 'agent-platform'], {}],
    ['a zone as location', ['set-auth', 'oauth-business', '--project', 'p', '--location', 'us-central1-a'], {}],
    ['a non-region location', ['set-auth', 'agent-platform', '--project', 'p', '--location', 'moon'], {}],
    [
      'a bad GOOGLE_CLOUD_LOCATION',
      ['set-auth', 'oauth-business', '--project', 'p'],
      { GOOGLE_CLOUD_LOCATION: 'Europe' },
    ],
    ['a bad project', ['set-auth', 'oauth-business', '--project', 'has space', '--location', 'us'], {}],
    ['extra positional argument to set-auth', ['set-auth', 'oauth-personal', 'extra'], {}],
    ['extra positional argument to show', ['show', 'extra'], {}],
    ['extra positional argument to validate', ['validate', 'extra'], {}],
    ['missing type', ['set-auth'], {}],
    ['unknown option', ['set-auth', 'oauth-personal', '--api-key', 'x'], {}],
  ];

  it.each(bad)('%s: exit 2, one-line error, file untouched', async (_label, args, env) => {
    sandbox = makeSandbox();
    writeSettings(sandbox, original);
    const before = fs.readFileSync(settingsFile(sandbox));
    const r = await agyctl(['settings', ...args], sandbox, { env });
    expect(r.exitCode, r.stderr).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^error: \S/);
    expect(lines.length).toBeLessThanOrEqual(2); // the error, and at most one hint line
    expect(fs.readFileSync(settingsFile(sandbox)).equals(before)).toBe(true);
    expect(fs.readdirSync(sandbox.stateDir)).toEqual(['settings.json']);
  });

  it('--json gives {ok:false, error:{code, exit:2}} on bad input', async () => {
    sandbox = makeSandbox();
    const r = await agyctl(['settings', 'set-auth', 'nope', '--json'], sandbox);
    expect(r.exitCode).toBe(2);
    expect(parseJson(r.stdout)).toMatchObject({ schemaVersion: 1, ok: false, error: { code: 'usage', exit: 2 } });
    expect(fs.existsSync(sandbox.stateDir)).toBe(false);
  });
});

describe('settings: existing files', () => {
  it('keeps unknown keys in order and byte for byte, and keeps the mode', async () => {
    sandbox = makeSandbox();
    const original =
      '{\n    "zeta": {"a": [1, 2]},\n    "10": 1.0,\n    "auth": {"type": "oauth-personal", "remember": true},\n    "alpha": "x"\n}\n';
    writeSettings(sandbox, original);
    fs.chmodSync(settingsFile(sandbox), 0o600);
    const r = await agyctl(
      ['settings', 'set-auth', 'oauth-business', '--project', 'p', '--location', 'us-central1'],
      sandbox,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const text = readText(sandbox);
    expect(text).toBe(
      original
        .replace('"oauth-personal"', '"oauth-business"')
        .replace(
          '"alpha": "x"\n',
          '"alpha": "x",\n    "gcp": {\n        "project": "p",\n        "location": "us-central1"\n    }\n',
        ),
    );
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['10', 'zeta', 'auth', 'alpha', 'gcp']); // JSON.parse puts "10" first; the text did not move it
    expect(fs.statSync(settingsFile(sandbox)).mode & 0o777).toBe(0o600);
  });

  it('refuses a broken file naming line and column; --force keeps it as settings.json.bak-<UTC time>', async () => {
    sandbox = makeSandbox();
    const broken = '{\n  "auth": {"type": "oauth-personal"}\n  "mine": "precious"\n}\n';
    writeSettings(sandbox, broken);
    const refused = await agyctl(['settings', 'set-auth', 'gemini-api-key'], sandbox);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('line 3, column 3');
    expect(refused.stderr).toContain('--force');
    expect(readText(sandbox)).toBe(broken);

    const validate = await agyctl(['settings', 'validate', '--json'], sandbox);
    expect(validate.exitCode).toBe(2);
    expect(parseJson(validate.stdout)).toMatchObject({
      ok: false,
      usable: false,
      problems: [{ id: 'json-invalid', line: 3, column: 3 }],
    });

    const forced = await agyctl(['settings', 'set-auth', 'gemini-api-key', '--force', '--json'], sandbox);
    expect(forced.exitCode, forced.stderr).toBe(0);
    const backup = String((parseJson(forced.stdout).settings as Record<string, unknown>).backup);
    expect(path.basename(backup)).toMatch(/^settings\.json\.bak-\d{8}T\d{6}Z$/);
    expect(fs.readFileSync(backup, 'utf8')).toBe(broken);
    expect(JSON.parse(readText(sandbox))).toEqual({ auth: { type: 'gemini-api-key' } });
    const human = await agyctl(['settings', 'set-auth', 'oauth-personal', '--force'], sandbox);
    expect(human.stdout).not.toContain('Moved'); // a good file needs no backup, even with --force
  });

  it('refuses a symlinked settings.json (exit 2, unsafe-symlink) and leaves its target alone', async () => {
    sandbox = makeSandbox();
    fs.mkdirSync(sandbox.stateDir, { recursive: true });
    const real = path.join(sandbox.root, 'dotfiles-settings.json');
    fs.writeFileSync(real, '{"auth": {"type": "oauth-personal"}}\n');
    fs.symlinkSync(real, settingsFile(sandbox));
    const r = await agyctl(['settings', 'set-auth', 'gemini-api-key', '--json'], sandbox);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(parseJson(r.stdout).error).toMatchObject({ code: 'unsafe-symlink' });
    expect(fs.lstatSync(settingsFile(sandbox)).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toBe('{"auth": {"type": "oauth-personal"}}\n');
    expect((await showJson(sandbox)).settings as Record<string, unknown>).toMatchObject({
      symlink: true,
      target: real,
    });
  });

  it('validate exits 0 with warnings only, 2 when the file is missing', async () => {
    sandbox = makeSandbox();
    const missing = await agyctl(['settings', 'validate'], sandbox);
    expect(missing.exitCode).toBe(2);
    expect(missing.stdout).toContain('does not exist');
    writeSettings(sandbox, { auth: { type: 'vertex-ai' }, gcp: { project: 'p', location: 'us-central1' } });
    const legacy = await agyctl(['settings', 'validate', '--json'], sandbox);
    expect(legacy.exitCode).toBe(0);
    expect(parseJson(legacy.stdout)).toMatchObject({
      ok: true,
      usable: true,
      problems: [{ id: 'auth-type-legacy', severity: 'warning' }],
    });
  });
});

describe('settings: running servers', () => {
  it('names the pid of a running server that must be restarted', async () => {
    sandbox = makeSandbox();
    writeSettings(sandbox, { auth: { type: 'oauth-personal' } });
    sim = new SimServer(sandbox);
    await sim.request('initialize', { protocolVersion: 1 }); // up and serving
    const human = await agyctl(['settings', 'set-auth', 'gemini-api-key'], sandbox);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toContain('restart');
    expect(human.stdout).toContain(`pid ${sim.pid}`);
    expect(human.stderr).toContain(`server pid ${sim.pid} does not have GEMINI_API_KEY in its environment`);
    const json = parseJson((await agyctl(['settings', 'set-auth', 'oauth-personal', '--json'], sandbox)).stdout);
    expect(json).toMatchObject({ restartRequired: true, servers: [{ pid: sim.pid }] });
    sim.kill();
    await new Promise((resolve) => sim!.child.once('exit', resolve));
    const after = await agyctl(['settings', 'set-auth', 'gemini-api-key'], sandbox);
    expect(after.stdout).toContain('the next server start will use');
    expect(after.stdout).not.toContain(`pid ${sim.pid}`);
  });
});
