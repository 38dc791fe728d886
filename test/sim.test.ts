// Drives scripts/agy-acp-sim over stdio and checks each RC01 behaviour and
// test switch the simulator promises (docs/simulator.md).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LAUNCHER = join(ROOT, 'scripts', 'agy-acp-sim');
const MAIN_JS = join(ROOT, 'dist', 'sim', 'main.js');

// ---------------------------------------------------------------- fixtures

const URL_PREFIX = 'Open the following link to authenticate the ACP server: ';
const ONBOARDING_FAILED = {
  code: -32000,
  message: 'Onboarding failed: The authentication flow did not complete successfully.',
  data: { reason: 'onboarding_failed' },
};
const ONBOARDING_TIMED_OUT = {
  code: -32000,
  message: 'Onboarding failed: Timed out waiting for the authentication flow to complete.',
  data: { reason: 'onboarding_failed' },
};
const REVOKED = {
  code: -32000,
  message: 'Authentication failed',
  data: { message: 'Token refresh failed: invalid_grant (Token has been expired or revoked.). Re-authentication required.' },
};

function authRequired(home: string): unknown {
  const settings = join(home, '.gemini', 'antigravity-acp', 'settings.json');
  return {
    code: -32000,
    message: 'Authentication required',
    data: {
      message: `No authentication method selected. Either call the \`authenticate\` method (supports oauth-personal, gemini-api-key, agent-platform), or set \`auth.type\` in settings.json (${settings}) to one of: oauth-personal, gemini-api-key (requires GEMINI_API_KEY env var), oauth-business (Gemini Enterprise; requires gcp.project/location), agent-platform (formerly 'vertex-ai', still accepted; requires GOOGLE_API_KEY, or a project and location from GOOGLE_CLOUD_PROJECT/GOOGLE_CLOUD_LOCATION or gcp.project/gcp.location with Application Default Credentials).`,
    },
  };
}

const INITIALIZE_RESULT = {
  protocolVersion: 1,
  agentCapabilities: {
    loadSession: true,
    promptCapabilities: { image: true, audio: true, embeddedContext: true },
    mcpCapabilities: { http: true, sse: true },
    sessionCapabilities: { list: {}, resume: {} },
    auth: { logout: {} },
  },
  authMethods: [
    { description: 'Log in with your Google account', id: 'oauth-personal', name: 'Log in with Google' },
    { description: 'Log in with your Gemini Enterprise account', id: 'oauth-business', name: 'Log in with Gemini Enterprise' },
    { description: 'Use an API key with Gemini Developer API', id: 'gemini-api-key', name: 'Gemini API key' },
    {
      description: 'Use Gemini Enterprise Agent Platform (formerly Vertex AI) with Application Default Credentials or an API key',
      id: 'agent-platform',
      name: 'Gemini Enterprise Agent Platform',
    },
  ],
  agentInfo: { name: 'antigravity-acp', title: 'Google Antigravity', version: 'agy_acp_server_20260818_01_RC01' },
};

const MODELS: Array<[string, string]> = [
  ['gemini-3.8-flash-high', 'Gemini 3.8 Flash (High)'],
  ['gemini-3.8-flash-medium', 'Gemini 3.8 Flash (Medium)'],
  ['gemini-3.8-flash-low', 'Gemini 3.8 Flash (Low)'],
  ['gemini-3.7-flash-high', 'Gemini 3.7 Flash (High)'],
  ['gemini-3.7-flash-medium', 'Gemini 3.7 Flash (Medium)'],
  ['gemini-3.7-flash-low', 'Gemini 3.7 Flash (Low)'],
  ['gemini-3.6-flash-high', 'Gemini 3.6 Flash (High)'],
  ['gemini-3.6-flash-medium', 'Gemini 3.6 Flash (Medium)'],
  ['gemini-3.6-flash-low', 'Gemini 3.6 Flash (Low)'],
  ['gemini-pro-agent', 'Gemini 3.1 Pro (High)'],
  ['gemini-3.1-pro-low', 'Gemini 3.1 Pro (Low)'],
];
const MODES = [
  { id: 'default', name: 'Default', description: 'Default permission prompt flow' },
  { id: 'auto_edit', name: 'Auto Edit', description: 'Auto-approve file edit tools' },
  { id: 'yolo', name: 'YOLO', description: 'Auto-approve all tools' },
];

function expectedConfigOptions(model: string, mode: string): unknown[] {
  return [
    {
      currentValue: model,
      id: 'model',
      name: 'Model',
      category: 'model',
      type: 'select',
      options: MODELS.map(([value, name]) => ({ value, name, description: value })),
    },
    {
      currentValue: mode,
      id: 'mode',
      name: 'Session Mode',
      category: 'mode',
      type: 'select',
      options: MODES.map((m) => ({ value: m.id, name: m.name, description: m.description })),
    },
  ];
}

function expectedSessionState(model = 'gemini-3.7-flash-high', mode = 'default'): Record<string, unknown> {
  return {
    modes: { currentModeId: mode, availableModes: MODES },
    models: {
      availableModels: MODELS.map(([modelId, name]) => ({ modelId, name, description: modelId })),
      currentModelId: model,
    },
    configOptions: expectedConfigOptions(model, mode),
  };
}

const AVAILABLE_COMMANDS = {
  availableCommands: [
    {
      name: 'plan',
      description: 'Plan carefully before executing a task (generates an implementation plan artifact and awaits user approval).',
    },
    { name: 'logout', description: 'Log out and clear stored credentials.' },
  ],
  sessionUpdate: 'available_commands_update',
};

const DDL = [
  'CREATE TABLE `trajectory_meta` (`trajectory_id` text,`cascade_id` text,`trajectory_type` integer,`source` integer,PRIMARY KEY (`trajectory_id`))',
  'CREATE TABLE `steps` (`idx` integer,`step_type` integer NOT NULL DEFAULT 0,`status` integer NOT NULL DEFAULT 0,`has_subtrajectory` numeric NOT NULL DEFAULT false,`metadata` blob,`error_details` blob,`permissions` blob,`task_details` blob,`render_info` blob,`step_payload` blob,`step_format` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))',
  'CREATE TABLE `gen_metadata` (`idx` integer,`data` blob,`size` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))',
  'CREATE TABLE `executor_metadata` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))',
  'CREATE TABLE `parent_references` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))',
  'CREATE TABLE `trajectory_metadata_blob` (`id` text DEFAULT "main",`data` blob,PRIMARY KEY (`id`))',
  'CREATE TABLE `battle_mode_infos` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))',
];

const URL_RE = new RegExp(
  '^https://accounts\\.google\\.com/o/oauth2/v2/auth\\?response_type=code' +
    '&client_id=1071006060591-tmhssin2h21lcre235vtolojh4g403ep\\.apps\\.googleusercontent\\.com' +
    '&redirect_uri=http%3A%2F%2F127\\.0\\.0\\.1%3A(\\d+)(%2F[A-Za-z0-9%._-]*)' +
    '&scope=https%3A%2F%2Fwww\\.googleapis\\.com%2Fauth%2Fcloud-platform' +
    '\\+https%3A%2F%2Fwww\\.googleapis\\.com%2Fauth%2Fuserinfo\\.email' +
    '\\+https%3A%2F%2Fwww\\.googleapis\\.com%2Fauth%2Faicode' +
    '&state=([0-9a-f]{32})&access_type=offline&prompt=consent' +
    '&code_challenge=([A-Za-z0-9_-]{43})&code_challenge_method=S256$',
);

interface ParsedUrl {
  port: number;
  path: string;
  state: string;
}

function parseAuthUrl(url: string): ParsedUrl {
  const m = URL_RE.exec(url);
  if (!m) throw new Error(`URL does not match the RC01 anatomy: ${url}`);
  return { port: Number(m[1]), path: decodeURIComponent(m[2]!), state: m[3]! };
}

// ---------------------------------------------------------------- helpers

type Msg = Record<string, any>;

const tmpRoots: string[] = [];
function tmp(prefix = 'agy-sim-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tmpRoots.push(d);
  return d;
}

function stateDir(home: string): string {
  return join(home, '.gemini', 'antigravity-acp');
}

function writeState(home: string, files: { settings?: unknown; token?: unknown | string }): void {
  mkdirSync(stateDir(home), { recursive: true });
  if (files.settings !== undefined) writeFileSync(join(stateDir(home), 'settings.json'), JSON.stringify(files.settings));
  if (files.token !== undefined) {
    const body = typeof files.token === 'string' ? files.token : JSON.stringify(files.token);
    writeFileSync(join(stateDir(home), 'acp_token.json'), body, { mode: 0o600 });
  }
}

const GOOD_TOKEN = { access_token: 'ya29.fixture', refresh_token: '1//fixture', token_type: 'Bearer', expiry_date: 1 };

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const ANSI_RE = /\x1b\[[0-9;?]*[A-Za-z]/g;

const running: Sim[] = [];

class Sim {
  readonly child: ChildProcess;
  readonly rawLines: string[] = [];
  readonly messages: Msg[] = [];
  stdout = '';
  stderr = '';
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly spawnedAt = Date.now();
  private nextId = 1;
  private partial = '';

  constructor(
    readonly home: string,
    env: Record<string, string> = {},
    args: string[] = [],
  ) {
    this.child = spawn(process.execPath, [LAUNCHER, ...args], {
      cwd: ROOT,
      // A minimal env: nothing from the developer's shell (BROWSER, DISPLAY,
      // API keys) leaks into the simulator. No URL is ever launched unless a
      // test asks for it.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, AGY_SIM_LAUNCH: 'none', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    running.push(this);
    this.child.stdout!.setEncoding('utf8');
    this.child.stderr!.setEncoding('utf8');
    this.child.stdout!.on('data', (c: string) => this.onStdout(c));
    this.child.stderr!.on('data', (c: string) => (this.stderr += c));
    this.child.stdin!.on('error', () => {});
    this.exited = new Promise((res) =>
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        res(this.exit);
      }),
    );
  }

  private onStdout(chunk: string): void {
    this.stdout += chunk;
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop()!;
    for (const line of parts) {
      this.rawLines.push(line);
      try {
        const msg: unknown = JSON.parse(line.replace(ANSI_RE, ''));
        if (msg && typeof msg === 'object' && !Array.isArray(msg)) this.messages.push(msg as Msg);
      } catch {
        // noise lines stay in rawLines only
      }
    }
  }

  sendRaw(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  send(msg: Msg): void {
    this.sendRaw(JSON.stringify({ jsonrpc: '2.0', ...msg }));
  }

  /** Sends a request; returns its id. */
  start(method: string, params: unknown = {}): number {
    const id = this.nextId++;
    this.send({ id, method, params });
    return id;
  }

  async response(id: number | string | null, timeoutMs = 10_000): Promise<Msg> {
    try {
      return await until(
        `response to ${id}`,
        () => this.messages.find((m) => m.id === id && ('result' in m || 'error' in m) && !('method' in m)),
        timeoutMs,
      );
    } catch (err) {
      // Say why: a dead process or a stderr trace beats a bare timeout.
      throw new Error(
        `${(err as Error).message}; exit=${JSON.stringify(this.exit)} stderr=${JSON.stringify(this.stderr.slice(0, 2000))} ` +
          `stdout=${JSON.stringify(this.stdout.slice(0, 2000))}`,
      );
    }
  }

  responseIndex(id: number): number {
    return this.messages.findIndex((m) => m.id === id && ('result' in m || 'error' in m) && !('method' in m));
  }

  async request(method: string, params: unknown = {}, timeoutMs = 10_000): Promise<Msg> {
    return this.response(this.start(method, params), timeoutMs);
  }

  async result(method: string, params: unknown = {}): Promise<any> {
    const r = await this.request(method, params);
    if (r.error) throw new Error(`${method} failed: ${JSON.stringify(r.error)}`);
    return r.result;
  }

  hasResponse(id: number): boolean {
    return this.responseIndex(id) >= 0;
  }

  updates(sessionId: string): Msg[] {
    return this.messages.filter((m) => m.method === 'session/update' && m.params?.sessionId === sessionId);
  }

  waitForRawLine(pred: (l: string) => boolean, timeoutMs = 5000): Promise<string> {
    return until('a stdout line', () => this.rawLines.find(pred), timeoutMs);
  }

  async closeStdin(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin!.end();
    return this.exited;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.exit === undefined) this.child.kill(signal);
  }
}

async function authedSim(env: Record<string, string> = {}, home = tmp()): Promise<Sim> {
  writeState(home, { settings: { auth: { type: 'oauth-personal' } }, token: GOOD_TOKEN });
  return new Sim(home, env);
}

async function newSession(sim: Sim, cwd = '/work/project'): Promise<{ id: number; sessionId: string; result: any }> {
  const id = sim.start('session/new', { cwd, mcpServers: [] });
  const r = await sim.response(id);
  if (r.error) throw new Error(`session/new failed: ${JSON.stringify(r.error)}`);
  const sessionId: string = r.result.sessionId;
  // The commands notification follows the response; wait for it so later
  // snapshots of sim.messages start after it.
  await until('available_commands_update', () =>
    sim.updates(sessionId).find((m) => m.params.update.sessionUpdate === 'available_commands_update'),
  );
  return { id, sessionId, result: r.result };
}

function httpRequest(url: string): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    httpGet(url, (resp) => {
      let body = '';
      resp.setEncoding('utf8');
      resp.on('data', (c: string) => (body += c));
      resp.on('end', () => res({ status: resp.statusCode ?? 0, body }));
    }).on('error', rej);
  });
}

/** Resolves 'open' or the connect error code, closing at once (a bare liveness probe). */
function tcpProbe(port: number): Promise<string> {
  return new Promise((res) => {
    const s = connect(port, '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      res('open');
    });
    s.on('error', (e: NodeJS.ErrnoException) => res(e.code ?? 'error'));
  });
}

async function waitRefused(port: number, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await tcpProbe(port)) !== 'ECONNREFUSED') {
    if (Date.now() > deadline) throw new Error(`port ${port} still accepts connections`);
    await sleep(20);
  }
}

function freePort(): Promise<number> {
  return new Promise((res) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => res(port));
    });
  });
}

/** Starts oauth with AGY_SIM_LAUNCH=stdout and returns the parsed URL. */
async function startOAuth(sim: Sim, methodId = 'oauth-personal'): Promise<{ id: number; url: string; parsed: ParsedUrl }> {
  const id = sim.start('authenticate', { methodId });
  const line = await sim.waitForRawLine((l) => l.startsWith(URL_PREFIX));
  const url = line.slice(URL_PREFIX.length);
  return { id, url, parsed: parseAuthUrl(url) };
}

function tablesOf(dbPath: string): Array<{ name: string; sql: string }> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY rowid").all() as Array<{
      name: string;
      sql: string;
    }>;
  } finally {
    db.close();
  }
}

function queryLive<T>(dbPath: string, sql: string): T[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

function convPath(home: string, sessionId: string, ext = 'db'): string {
  return join(stateDir(home), 'conversations', `${sessionId}.${ext}`);
}

function capturingScript(dir: string, name: string, logFile: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\nprintf '%s|%s\\n' "$#" "$1" >> '${logFile}'\n`);
  chmodSync(path, 0o755);
  return path;
}

// ---------------------------------------------------------------- build

function newestMtime(dir: string): number {
  return Math.max(...readdirSync(dir).map((f) => statSync(join(dir, f)).mtimeMs));
}

beforeAll(() => {
  // Build with the project's tsc when dist/sim is missing or older than its
  // sources. Other modules' type errors do not block emitting ours, so only
  // the freshness of dist/sim/main.js is checked afterwards.
  const fresh = () => existsSync(MAIN_JS) && statSync(MAIN_JS).mtimeMs >= newestMtime(join(ROOT, 'src', 'sim'));
  if (!fresh()) {
    spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  }
  expect(fresh(), 'dist/sim is built and up to date').toBe(true);
}, 120_000);

afterEach(() => {
  for (const sim of running.splice(0)) sim.kill();
});

afterAll(() => {
  for (const d of tmpRoots) rmSync(d, { recursive: true, force: true });
});

// ---------------------------------------------------------------- tests

describe('process lifecycle and framing', () => {
  it('is silent until the first request, then answers initialize verbatim', async () => {
    const sim = new Sim(tmp());
    await sleep(400);
    expect(sim.stdout).toBe('');
    expect(sim.stderr).toBe('');
    const r = await sim.request('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
    expect(r).toEqual({ jsonrpc: '2.0', id: 1, result: INITIALIZE_RESULT });
  });

  it('accepts --debug, --notices and --uid=; rejects unknown flags with exit 2', async () => {
    const ok = new Sim(tmp(), {}, ['--debug', '--notices', '--uid=12345']);
    expect((await ok.request('initialize', { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    expect(ok.stderr).toBe('');

    const bad = new Sim(tmp(), {}, ['--model=x']);
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr).toMatch(/unknown flag '--model=x'/);
    expect(bad.stderr).toMatch(/usage:/);
    expect(bad.stdout).toBe('');
  });

  it('rejects a malformed switch with exit 2', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'carrier-pigeon' });
    expect((await sim.exited).code).toBe(2);
    expect(sim.stderr).toMatch(/AGY_SIM_LAUNCH/);
  });

  it('AGY_SIM_VERSION overrides agentInfo.version', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_VERSION: 'agy_acp_server_20270101_02_RC07' });
    const r = await sim.result('initialize', { protocolVersion: 1 });
    expect(r.agentInfo).toEqual({ name: 'antigravity-acp', title: 'Google Antigravity', version: 'agy_acp_server_20270101_02_RC07' });
  });

  it('AGY_SIM_STARTUP_MS delays the first answer, measured from process start', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_STARTUP_MS: '800' });
    const id = sim.start('initialize', { protocolVersion: 1 });
    await sim.response(id);
    expect(Date.now() - sim.spawnedAt).toBeGreaterThanOrEqual(790);
    // Later requests are not delayed again.
    const t0 = Date.now();
    await sim.request('initialize', { protocolVersion: 1 });
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it('AGY_SIM_EXIT_AT_START exits with that code before reading anything', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_EXIT_AT_START: '3' });
    expect((await sim.exited).code).toBe(3);
    expect(sim.stderr.split('\n')[0]).toBe('error: simulated startup failure');
    expect(sim.stderr.trim().split('\n').length).toBeGreaterThanOrEqual(3);
    expect(sim.stdout).toBe('');
  });

  it('AGY_SIM_HUGE_LINE_BYTES pads initialize into one multi-MB line', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_HUGE_LINE_BYTES: '3000000' });
    const r = await sim.request('initialize', { protocolVersion: 1 }, 15_000);
    expect(r.result._meta.padding.length).toBe(3_000_000);
    expect(r.result.agentInfo.name).toBe('antigravity-acp');
    expect(sim.rawLines.length).toBe(1);
  });

  it('answers a parse error with -32700 and id null, then keeps going', async () => {
    const sim = new Sim(tmp());
    sim.sendRaw('{"jsonrpc":"2.0","id":1,"method":');
    const r = await sim.response(null);
    expect(r).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    expect((await sim.request('initialize', { protocolVersion: 1 })).result.protocolVersion).toBe(1);
  });

  it('answers unknown methods with -32601 and data.method', async () => {
    const sim = new Sim(tmp());
    const r = await sim.request('session/fly', {});
    expect(r.error).toEqual({ code: -32601, message: 'Method not found', data: { method: 'session/fly' } });
  });

  it('session/cancel: -32601 as a request, silently ignored as a notification', async () => {
    const sim = new Sim(tmp());
    const r = await sim.request('session/cancel', { sessionId: 'x' });
    expect(r.error).toEqual({ code: -32601, message: 'Method not found', data: { method: 'session/cancel' } });
    const before = sim.messages.length;
    sim.send({ method: 'session/cancel', params: { sessionId: 'x' } });
    const id = sim.start('initialize', { protocolVersion: 1 });
    await sim.response(id);
    expect(sim.messages.slice(before).map((m) => m.id)).toEqual([id]);
  });

  it('exits 0 on stdin EOF, even with an authenticate pending', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout' });
    const { parsed } = await startOAuth(sim);
    expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
  });

  it('answers requests that arrived during the cold start before exiting on EOF', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_STARTUP_MS: '300' });
    const id = sim.start('initialize', { protocolVersion: 1 });
    expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
    expect(sim.hasResponse(id)).toBe(true);
  });

  it('dies promptly on SIGTERM; AGY_SIM_IGNORE_SIGTERM=1 ignores it', async () => {
    const plain = new Sim(tmp());
    await plain.request('initialize', { protocolVersion: 1 });
    const t0 = Date.now();
    plain.child.kill('SIGTERM');
    const ex = await plain.exited;
    expect(ex.signal === 'SIGTERM' || ex.code !== null).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1500);

    const stubborn = new Sim(tmp(), { AGY_SIM_IGNORE_SIGTERM: '1' });
    await stubborn.request('initialize', { protocolVersion: 1 });
    stubborn.child.kill('SIGTERM');
    await sleep(400);
    expect(stubborn.exit).toBeUndefined();
    expect((await stubborn.request('initialize', { protocolVersion: 1 })).result).toBeDefined();
    stubborn.kill('SIGKILL');
    expect((await stubborn.exited).signal).toBe('SIGKILL');
  });

  it('AGY_SIM_NOISE=garbage writes non-JSON lines around responses', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_NOISE: 'garbage' });
    await sim.request('initialize', { protocolVersion: 1 });
    await sim.request('session/fly', {});
    const nonJson = sim.rawLines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(nonJson.length).toBeGreaterThanOrEqual(4);
    expect(sim.rawLines.some((l) => l.includes('\x1b'))).toBe(false);
  });

  it('AGY_SIM_NOISE=ansi wraps responses in terminal escapes', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_NOISE: 'ansi' });
    const r = await sim.request('initialize', { protocolVersion: 1 });
    expect(r.result).toEqual(INITIALIZE_RESULT);
    expect(sim.rawLines).toContain('\x1b[?1049h');
    expect(sim.rawLines.some((l) => l.includes('\x1b[2J'))).toBe(true);
    const responseLine = sim.rawLines.find((l) => l.includes('"protocolVersion"'))!;
    expect(responseLine.startsWith('\x1b[?1049l{')).toBe(true);
  });

  it('AGY_SIM_NOISE=both does both', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_NOISE: 'both' });
    await sim.request('initialize', { protocolVersion: 1 });
    expect(sim.rawLines.some((l) => l.startsWith('\x1b[?1049l{'))).toBe(true);
    expect(sim.rawLines.some((l) => !l.includes('\x1b') && !l.startsWith('{"jsonrpc":"2.0","id"'))).toBe(true);
  });
});

describe('authenticate: params and key-based methods', () => {
  it('requires methodId (a `method` param is -32602 with loc methodId)', async () => {
    const sim = new Sim(tmp());
    const expected = {
      code: -32602,
      message: 'Invalid params',
      data: { errors: [{ loc: ['methodId'], msg: 'field required', type: 'value_error.missing' }] },
    };
    expect((await sim.request('authenticate', { method: 'oauth-personal' })).error).toEqual(expected);
    expect((await sim.request('authenticate', {})).error).toEqual(expected);
    sim.send({ id: 77, method: 'authenticate' }); // no params at all
    expect((await sim.response(77)).error).toEqual(expected);
  });

  it('rejects an unknown methodId with a clear message', async () => {
    const sim = new Sim(tmp());
    const r = await sim.request('authenticate', { methodId: 'oauth-personnal' });
    expect(r.error.code).toBe(-32602);
    expect(JSON.stringify(r.error)).toContain("unknown authentication method 'oauth-personnal'");
  });

  it('gemini-api-key needs GEMINI_API_KEY in the server env', async () => {
    const without = new Sim(tmp());
    const r = await without.request('authenticate', { methodId: 'gemini-api-key' });
    expect(r.error.code).toBe(-32000);
    expect(JSON.stringify(r.error)).toContain('GEMINI_API_KEY');

    const home = tmp();
    const withKey = new Sim(home, { GEMINI_API_KEY: 'sim-key' });
    expect((await withKey.request('session/new', { cwd: '/x', mcpServers: [] })).error).toEqual(authRequired(home));
    expect(await withKey.result('authenticate', { methodId: 'gemini-api-key' })).toEqual({});
    await newSession(withKey);
  });

  it('agent-platform needs GOOGLE_API_KEY or a project and location', async () => {
    const none = new Sim(tmp());
    const r = await none.request('authenticate', { methodId: 'agent-platform' });
    expect(r.error.code).toBe(-32000);
    expect(JSON.stringify(r.error)).toContain('GOOGLE_API_KEY');

    const projectOnly = new Sim(tmp(), { GOOGLE_CLOUD_PROJECT: 'p' });
    expect((await projectOnly.request('authenticate', { methodId: 'agent-platform' })).error.code).toBe(-32000);

    const cases: Array<{ env: Record<string, string>; settings?: unknown }> = [
      { env: { GOOGLE_API_KEY: 'k' } },
      { env: { GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us-central1' } },
      { env: {}, settings: { gcp: { project: 'p', location: 'europe-west4' } } },
    ];
    for (const c of cases) {
      const home = tmp();
      if (c.settings) writeState(home, { settings: c.settings });
      const sim = new Sim(home, c.env);
      expect(await sim.result('authenticate', { methodId: 'agent-platform' })).toEqual({});
      await newSession(sim);
    }
  });
});

describe('authentication at startup', () => {
  const cases: Array<{ name: string; settings?: unknown; token?: unknown; env?: Record<string, string>; ok: boolean }> = [
    { name: 'token without settings auth.type', token: GOOD_TOKEN, ok: false },
    { name: 'oauth-personal + token', settings: { auth: { type: 'oauth-personal' } }, token: GOOD_TOKEN, ok: true },
    { name: 'oauth-personal without token', settings: { auth: { type: 'oauth-personal' } }, ok: false },
    { name: 'oauth-personal + unparsable token', settings: { auth: { type: 'oauth-personal' } }, token: '{"access_tok', ok: false },
    { name: 'oauth-business + token, no gcp', settings: { auth: { type: 'oauth-business' } }, token: GOOD_TOKEN, ok: false },
    {
      name: 'oauth-business + token + gcp',
      settings: { auth: { type: 'oauth-business' }, gcp: { project: 'p', location: 'l' } },
      token: GOOD_TOKEN,
      ok: true,
    },
    { name: 'gemini-api-key + env', settings: { auth: { type: 'gemini-api-key' } }, env: { GEMINI_API_KEY: 'k' }, ok: true },
    { name: 'gemini-api-key without env', settings: { auth: { type: 'gemini-api-key' } }, ok: false },
    { name: 'agent-platform + GOOGLE_API_KEY', settings: { auth: { type: 'agent-platform' } }, env: { GOOGLE_API_KEY: 'k' }, ok: true },
    {
      name: 'legacy vertex-ai + env project/location',
      settings: { auth: { type: 'vertex-ai' } },
      env: { GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'l' },
      ok: true,
    },
    { name: 'agent-platform + settings gcp', settings: { auth: { type: 'agent-platform' }, gcp: { project: 'p', location: 'l' } }, ok: true },
    { name: 'agent-platform with nothing', settings: { auth: { type: 'agent-platform' } }, ok: false },
  ];

  it.each(cases)('$name → authenticated: $ok', async (c) => {
    const home = tmp();
    writeState(home, { settings: c.settings, token: c.token });
    const sim = new Sim(home, c.env ?? {});
    const r = await sim.request('session/new', { cwd: '/w', mcpServers: [] });
    if (c.ok) expect(r.result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    else expect(r.error).toEqual(authRequired(home));
  });

  it('reads settings.json only at startup', async () => {
    const home = tmp();
    const sim = new Sim(home);
    await sim.request('initialize', { protocolVersion: 1 });
    writeState(home, { settings: { auth: { type: 'oauth-personal' } }, token: GOOD_TOKEN });
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(authRequired(home));
    // A restart picks it up.
    const again = new Sim(home);
    await newSession(again);
  });

  it('AGY_SIM_TOKEN_STATE=revoked fails session/new with invalid_grant until a new login', async () => {
    const sim = await authedSim({ AGY_SIM_TOKEN_STATE: 'revoked', AGY_SIM_LAUNCH: 'stdout' });
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(REVOKED);
    const { id, parsed } = await startOAuth(sim);
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
    await newSession(sim);
  });

  it('a token with "sim_revoked": true is revoked too', async () => {
    const home = tmp();
    writeState(home, { settings: { auth: { type: 'oauth-personal' } }, token: { ...GOOD_TOKEN, sim_revoked: true } });
    const sim = new Sim(home);
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(REVOKED);
  });
});

describe('OAuth loopback flow', () => {
  it('builds the RC01 URL, survives a bare TCP probe, completes on a good callback', async () => {
    const home = tmp();
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout' });
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(authRequired(home));
    const { id, url, parsed } = await startOAuth(sim);
    expect(parsed.path).toBe('/');
    expect(url).toContain(`redirect_uri=http%3A%2F%2F127.0.0.1%3A${parsed.port}%2F&`);

    // Bare connect+close is not a request: the flow goes on.
    expect(await tcpProbe(parsed.port)).toBe('open');
    await sleep(150);
    expect(sim.hasResponse(id)).toBe(false);
    expect(await tcpProbe(parsed.port)).toBe('open');

    const code = 'SIMCODE-4/0AX4XfWh-do-not-print';
    const page = await httpRequest(`http://127.0.0.1:${parsed.port}/?code=${encodeURIComponent(code)}&state=${parsed.state}&scope=x`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Authentication successful');
    expect((await sim.response(id)).result).toEqual({});
    await waitRefused(parsed.port);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');

    const tokenPath = join(stateDir(home), 'acp_token.json');
    const st = statSync(tokenPath);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.size).toBeGreaterThan(400);
    expect(st.size).toBeLessThan(650);
    const token = JSON.parse(readFileSync(tokenPath, 'utf8'));
    expect(token.access_token).toMatch(/^ya29\.sim-/);
    expect(token.refresh_token).toMatch(/^1\/\/sim-/);
    expect(token.token_type).toBe('Bearer');
    expect(token.scope).toBe(
      'https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/aicode',
    );
    expect(Math.abs(token.expiry_date - (Date.now() + 3600_000))).toBeLessThan(60_000);
    expect(readdirSync(stateDir(home)).filter((f) => f.includes('.tmp'))).toEqual([]);

    await newSession(sim);
    // Neither the code nor the token ever leaves the process.
    for (const secret of [code, token.access_token, token.refresh_token, 'SIMCODE']) {
      expect(sim.stdout).not.toContain(secret);
      expect(sim.stderr).not.toContain(secret);
    }
  });

  it('oauth-personal without AGY_SIM_AUTH_WRITES_SETTINGS leaves settings.json alone', async () => {
    const home = tmp();
    const settings = { auth: { type: 'gemini-api-key' }, ui: { theme: 'dark' } };
    writeState(home, { settings });
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout' });
    const { id, parsed } = await startOAuth(sim);
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
    expect(JSON.parse(readFileSync(join(stateDir(home), 'settings.json'), 'utf8'))).toEqual(settings);
  });

  it('AGY_SIM_AUTH_WRITES_SETTINGS=1: an oauth-personal login rewrites auth.type', async () => {
    const home = tmp();
    writeState(home, { settings: { auth: { type: 'oauth-business' }, gcp: { project: 'p', location: 'l' } } });
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_AUTH_WRITES_SETTINGS: '1' });
    const { id, parsed } = await startOAuth(sim);
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
    expect(JSON.parse(readFileSync(join(stateDir(home), 'settings.json'), 'utf8'))).toEqual({
      auth: { type: 'oauth-personal' },
      gcp: { project: 'p', location: 'l' },
    });
  });

  it('oauth-business needs gcp.project/location in settings', async () => {
    const bare = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout' });
    const r = await bare.request('authenticate', { methodId: 'oauth-business' });
    expect(r.error.code).toBe(-32000);
    expect(JSON.stringify(r.error)).toContain('gcp.project');
    expect(bare.rawLines.some((l) => l.startsWith(URL_PREFIX))).toBe(false);

    const home = tmp();
    writeState(home, { settings: { auth: { type: 'oauth-business' }, gcp: { project: 'p', location: 'l' } } });
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout' });
    const { id, parsed } = await startOAuth(sim, 'oauth-business');
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
    await newSession(sim);
  });

  const failures: Array<{ name: string; url: (p: ParsedUrl) => string }> = [
    { name: 'GET / without code', url: (p) => `http://127.0.0.1:${p.port}/` },
    { name: 'wrong state', url: (p) => `http://127.0.0.1:${p.port}/oauth2callback?code=c&state=${'0'.repeat(32)}` },
    { name: 'error=access_denied', url: (p) => `http://127.0.0.1:${p.port}/oauth2callback?error=access_denied&state=${p.state}` },
    { name: 'wrong path', url: (p) => `http://127.0.0.1:${p.port}/callback?code=c&state=${p.state}` },
  ];

  it.each(failures)('a callback with $name fails the flow (callback path /oauth2callback)', async (f) => {
    const home = tmp();
    const sim = new Sim(home, { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_CALLBACK_PATH: '/oauth2callback' });
    const { id, url, parsed } = await startOAuth(sim);
    expect(parsed.path).toBe('/oauth2callback');
    expect(url).toContain(`%3A${parsed.port}%2Foauth2callback&scope=`);
    const page = await httpRequest(f.url(parsed));
    expect(page.body).toContain('Authentication failed');
    expect((await sim.response(id)).error).toEqual(ONBOARDING_FAILED);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
    expect(existsSync(join(stateDir(home), 'acp_token.json'))).toBe(false);
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(authRequired(home));
  });

  it('the good callback on /oauth2callback succeeds', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_CALLBACK_PATH: '/oauth2callback' });
    const { id, parsed } = await startOAuth(sim);
    const page = await httpRequest(`http://127.0.0.1:${parsed.port}/oauth2callback?state=${parsed.state}&code=abc`);
    expect(page.body).toContain('Authentication successful');
    expect((await sim.response(id)).result).toEqual({});
  });

  it('AGY_SIM_ONBOARD_TIMEOUT_MS ends the flow with the RC01 timeout error', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_ONBOARD_TIMEOUT_MS: '300' });
    const { id, parsed } = await startOAuth(sim);
    expect(await tcpProbe(parsed.port)).toBe('open');
    expect((await sim.response(id)).error).toEqual(ONBOARDING_TIMED_OUT);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
  });

  it('AGY_SIM_CALLBACK_PORT pins the listener port', async () => {
    const port = await freePort();
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_CALLBACK_PORT: String(port) });
    const { parsed } = await startOAuth(sim);
    expect(parsed.port).toBe(port);
    expect(await tcpProbe(port)).toBe('open');
  });

  it('AGY_SIM_CRASH_WHILE_WAITING_MS kills the server mid-login with exit 70', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_CRASH_WHILE_WAITING_MS: '200' });
    const { id, parsed } = await startOAuth(sim);
    expect((await sim.exited).code).toBe(70);
    expect(sim.stderr).toContain('FATAL: simulated crash');
    expect(sim.hasResponse(id)).toBe(false);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
  });

  it('AGY_SIM_DROP_LISTENER_MS closes the listener but keeps authenticate pending', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout', AGY_SIM_DROP_LISTENER_MS: '150' });
    const { id, parsed } = await startOAuth(sim);
    await waitRefused(parsed.port);
    await sleep(200);
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
    expect(sim.exit).toBeUndefined();
    expect(sim.hasResponse(id)).toBe(false);
    expect((await sim.request('initialize', { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    expect(sim.hasResponse(id)).toBe(false);
  });

  it('refuses a second OAuth authenticate while one is pending', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout' });
    const { id, parsed } = await startOAuth(sim);
    const second = await sim.request('authenticate', { methodId: 'oauth-personal' });
    expect(second.error.code).toBe(-32000);
    expect(await tcpProbe(parsed.port)).toBe('open');
    expect(sim.hasResponse(id)).toBe(false);
  });
});

describe('URL delivery (AGY_SIM_LAUNCH)', () => {
  function launchEnv(withBrowser: boolean): { dir: string; browserLog: string; xdgLog: string; env: Record<string, string> } {
    const dir = tmp('agy-sim-bin-');
    const browserLog = join(dir, 'browser.log');
    const xdgLog = join(dir, 'xdg.log');
    const browser = capturingScript(dir, 'fake-browser', browserLog);
    capturingScript(dir, 'xdg-open', xdgLog);
    const env: Record<string, string> = { PATH: `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}` };
    if (withBrowser) env.BROWSER = browser;
    return { dir, browserLog, xdgLog, env };
  }

  function readLaunch(log: string): Promise<string> {
    return until(`${log}`, () => (existsSync(log) ? readFileSync(log, 'utf8').trim() || undefined : undefined));
  }

  it('default: runs $BROWSER with the URL as its only argument, prints nothing', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'default' });
    const id = sim.start('authenticate', { methodId: 'oauth-personal' });
    const [argc, url] = (await readLaunch(l.browserLog)).split('|');
    expect(argc).toBe('1');
    const parsed = parseAuthUrl(url!);
    expect(existsSync(l.xdgLog)).toBe(false);
    expect(sim.stdout).toBe('');
    expect(sim.stderr).toBe('');
    await httpRequest(`http://127.0.0.1:${parsed.port}/?code=c&state=${parsed.state}`);
    expect((await sim.response(id)).result).toEqual({});
  });

  it('default without BROWSER: runs xdg-open from PATH', async () => {
    const l = launchEnv(false);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'default' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    const [argc, url] = (await readLaunch(l.xdgLog)).split('|');
    expect(argc).toBe('1');
    parseAuthUrl(url!);
    expect(sim.stdout + sim.stderr).toBe('');
  });

  it('xdg-only: ignores BROWSER', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'xdg-only' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    parseAuthUrl((await readLaunch(l.xdgLog)).split('|')[1]!);
    await sleep(200);
    expect(existsSync(l.browserLog)).toBe(false);
  });

  it('display-only: launches nothing and prints nothing without a display', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'display-only' });
    const id = sim.start('authenticate', { methodId: 'oauth-personal' });
    await sleep(500);
    expect(existsSync(l.browserLog)).toBe(false);
    expect(existsSync(l.xdgLog)).toBe(false);
    expect(sim.stdout + sim.stderr).toBe('');
    expect(sim.hasResponse(id)).toBe(false);
  });

  it.each(['DISPLAY', 'WAYLAND_DISPLAY'])('display-only: launches like default when %s is set', async (v) => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'display-only', [v]: ':0' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    parseAuthUrl((await readLaunch(l.browserLog)).split('|')[1]!);
  });

  it('stderr: prints the URL line on stderr only', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'stderr' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    const line = await until('stderr URL', () => sim.stderr.split('\n').find((x) => x.startsWith(URL_PREFIX)));
    parseAuthUrl(line.slice(URL_PREFIX.length));
    expect(sim.stdout).toBe('');
    expect(existsSync(l.browserLog)).toBe(false);
  });

  it('stdout: prints the URL line on the JSON-RPC channel, launches nothing', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'stdout' });
    await startOAuth(sim);
    await sleep(100);
    expect(existsSync(l.browserLog)).toBe(false);
    expect(existsSync(l.xdgLog)).toBe(false);
  });

  it('none: launches and prints nothing', async () => {
    const l = launchEnv(true);
    const sim = new Sim(tmp(), { ...l.env, AGY_SIM_LAUNCH: 'none' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    await sleep(400);
    expect(existsSync(l.browserLog)).toBe(false);
    expect(existsSync(l.xdgLog)).toBe(false);
    expect(sim.stdout + sim.stderr).toBe('');
  });
});

describe('sessions', () => {
  it('session/new returns the RC01 catalog, then available_commands_update, and a WAL-only SQLite DB', async () => {
    const home = tmp();
    const sim = await authedSim({}, home);
    const { id, sessionId, result } = await newSession(sim, '/work/project');
    expect(sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(result).toEqual({ sessionId, ...expectedSessionState() });
    const cmd = await until('commands', () => sim.updates(sessionId).find((m) => m.params.update.sessionUpdate === 'available_commands_update'));
    expect(cmd.params.update).toEqual(AVAILABLE_COMMANDS);
    expect(sim.messages.indexOf(cmd)).toBeGreaterThan(sim.responseIndex(id));

    const db = convPath(home, sessionId);
    expect(readFileSync(convPath(home, sessionId, 'meta'), 'utf8')).toBe('{"cwd":"/work/project"}');
    expect(existsSync(`${db}-wal`)).toBe(true);

    // The live DB, read through its WAL: the seven tables with the exact DDL.
    expect(tablesOf(db).map((t) => t.sql)).toEqual(DDL);
    expect(queryLive(db, 'SELECT trajectory_id FROM trajectory_meta')).toEqual([{ trajectory_id: sessionId }]);
    expect(queryLive(db, 'SELECT id FROM trajectory_metadata_blob')).toEqual([{ id: 'main' }]);

    // The main file alone holds no schema while the server runs.
    const copyDir = tmp();
    copyFileSync(db, join(copyDir, 'copy.db'));
    expect(tablesOf(join(copyDir, 'copy.db'))).toEqual([]);
  });

  it('session/new validates cwd and mcpServers', async () => {
    const sim = await authedSim();
    const r = await sim.request('session/new', { mcpServers: [] });
    expect(r.error).toEqual({ code: -32602, message: 'Invalid params', data: { errors: [{ loc: ['cwd'], msg: 'field required', type: 'value_error.missing' }] } });
    expect((await sim.request('session/new', { cwd: '/w' })).error.data.errors[0].loc).toEqual(['mcpServers']);
  });

  it('session/prompt streams 3+ delta chunks before end_turn and stores the turn', async () => {
    const home = tmp();
    const sim = await authedSim({}, home);
    const { sessionId } = await newSession(sim);

    const start = sim.messages.length;
    const pid = sim.start('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello there, simulator' }] });
    expect((await sim.response(pid)).result).toEqual({ stopReason: 'end_turn' });
    const after = sim.messages.slice(start);
    const chunks = after.filter((m) => m.method === 'session/update');
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const c of chunks) {
      expect(c.params.update.sessionUpdate).toBe('agent_message_chunk');
      expect(c.params.update.content.type).toBe('text');
    }
    expect(chunks.map((c) => c.params.update.content.text).join('')).toBe('SIM ECHO: hello there, simulator');
    expect(after[after.length - 1]!.id).toBe(pid); // notifications strictly before the response

    const m2 = sim.messages.length;
    const pid2 = sim.start('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Reply with exactly: HELLO ACP. Do not use any tools.' }],
    });
    await sim.response(pid2);
    const chunks2 = sim.messages.slice(m2).filter((m) => m.method === 'session/update');
    expect(chunks2.length).toBeGreaterThanOrEqual(3);
    expect(chunks2.map((c) => c.params.update.content.text).join('')).toBe('HELLO ACP.');

    const db = convPath(home, sessionId);
    const steps = queryLive<{ step_payload: Buffer }>(db, 'SELECT step_payload FROM steps ORDER BY idx');
    const texts = steps.map((s) => JSON.parse(s.step_payload.toString('utf8')).text);
    expect(texts).toEqual([
      'hello there, simulator',
      'SIM ECHO: hello there, simulator',
      'Reply with exactly: HELLO ACP. Do not use any tools.',
      'HELLO ACP.',
    ]);
    expect(queryLive(db, 'SELECT idx FROM gen_metadata ORDER BY idx')).toEqual([{ idx: 0 }, { idx: 1 }]);
    // Still nothing in the main file.
    const copy = join(tmp(), 'c.db');
    copyFileSync(db, copy);
    expect(tablesOf(copy)).toEqual([]);
  });

  it('never checkpoints while running, even past SQLite\'s 1000-page autocheckpoint', async () => {
    const home = tmp();
    const sim = await authedSim({ AGY_SIM_WRITE_INTERVAL_MS: '1' }, home);
    const { sessionId } = await newSession(sim);
    const db = convPath(home, sessionId);
    // 260 rows of 20 KB = 5.2 MB of WAL, beyond the default 4 MB trigger.
    await until('5 MB of WAL', () => statSync(`${db}-wal`).size > 5_200_000 || undefined, 30_000);
    const copy = join(tmp(), 'c.db');
    copyFileSync(db, copy);
    expect(tablesOf(copy)).toEqual([]);
    expect(statSync(db).size).toBe(4096);
  }, 40_000);

  it('session/prompt on an unknown session fails', async () => {
    const sim = await authedSim();
    const r = await sim.request('session/prompt', { sessionId: '00000000-0000-4000-8000-000000000000', prompt: [] });
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toBe('Session not found');
  });

  it('session/set_config_option takes configId and returns updated configOptions', async () => {
    const sim = await authedSim();
    const { sessionId } = await newSession(sim);
    const wrong = await sim.request('session/set_config_option', { sessionId, configOptionId: 'model', value: 'gemini-3.8-flash-low' });
    expect(wrong.error).toEqual({
      code: -32602,
      message: 'Invalid params',
      data: { errors: [{ loc: ['configId'], msg: 'field required', type: 'value_error.missing' }] },
    });
    const ok = await sim.result('session/set_config_option', { sessionId, configId: 'model', value: 'gemini-3.8-flash-low' });
    expect(ok).toEqual({ configOptions: expectedConfigOptions('gemini-3.8-flash-low', 'default') });
    const mode = await sim.result('session/set_config_option', { sessionId, configId: 'mode', value: 'yolo' });
    expect(mode).toEqual({ configOptions: expectedConfigOptions('gemini-3.8-flash-low', 'yolo') });
    const badValue = await sim.request('session/set_config_option', { sessionId, configId: 'model', value: 'gpt-5' });
    expect(badValue.error.code).toBe(-32602);
    expect(badValue.error.data.errors[0].loc).toEqual(['value']);
    const badId = await sim.request('session/set_config_option', { sessionId, configId: 'effort', value: 'low' });
    expect(badId.error.data.errors[0].loc).toEqual(['configId']);
  });

  it('session/set_mode takes modeId and answers {}', async () => {
    const sim = await authedSim();
    const { sessionId } = await newSession(sim);
    expect(await sim.result('session/set_mode', { sessionId, modeId: 'auto_edit' })).toEqual({});
    const cfg = await sim.result('session/set_config_option', { sessionId, configId: 'model', value: 'gemini-pro-agent' });
    expect(cfg.configOptions[1].currentValue).toBe('auto_edit');
    expect((await sim.request('session/set_mode', { sessionId, modeId: 'plan' })).error.code).toBe(-32602);
  });

  it('session/close answers {} and the connection survives', async () => {
    const sim = await authedSim();
    const { sessionId } = await newSession(sim);
    expect(await sim.result('session/close', { sessionId })).toEqual({});
    const r = await sim.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x' }] });
    expect(r.error.message).toBe('Session not found');
    expect((await sim.request('initialize', { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    await newSession(sim);
  });

  it('session/list lists the stored conversations with their cwd', async () => {
    const sim = await authedSim();
    const a = await newSession(sim, '/work/a');
    const b = await newSession(sim, '/work/b');
    const listed = await sim.result('session/list', {});
    const byId = new Map<string, any>(listed.sessions.map((s: any) => [s.sessionId, s]));
    expect(byId.get(a.sessionId).cwd).toBe('/work/a');
    expect(byId.get(b.sessionId).cwd).toBe('/work/b');
    const filtered = await sim.result('session/list', { cwd: '/work/b' });
    expect(filtered.sessions.map((s: any) => s.sessionId)).toEqual([b.sessionId]);
  });

  it('logout deletes acp_token.json; session/new then needs authentication', async () => {
    const home = tmp();
    const sim = await authedSim({}, home);
    await newSession(sim);
    expect(await sim.result('logout', {})).toEqual({});
    expect(existsSync(join(stateDir(home), 'acp_token.json'))).toBe(false);
    expect((await sim.request('session/new', { cwd: '/w', mcpServers: [] })).error).toEqual(authRequired(home));
  });

  it('AGY_SIM_PERMISSION_PROMPT=1: asks session/request_permission before streaming', async () => {
    const sim = await authedSim({ AGY_SIM_PERMISSION_PROMPT: '1' });
    const { sessionId } = await newSession(sim, '/work/p');
    const pid = sim.start('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'make a file' }] });
    const ask = await until('permission request', () => sim.messages.find((m) => m.method === 'session/request_permission'));
    expect(ask.id).toBeDefined();
    expect(ask.params.sessionId).toBe(sessionId);
    expect(ask.params.options).toEqual([
      { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
      { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
    ]);
    expect(ask.params.toolCall).toMatchObject({ title: 'Run create_file?', kind: 'edit', status: 'pending' });
    expect(ask.params.toolCall.content[0]).toMatchObject({ type: 'diff', path: '/work/p/sim-permission-probe.txt', _meta: { kind: 'add' } });
    await sleep(150);
    expect(sim.hasResponse(pid)).toBe(false);
    expect(sim.updates(sessionId).some((m) => m.params.update.sessionUpdate === 'agent_message_chunk')).toBe(false);

    const askIndex = sim.messages.indexOf(ask);
    sim.send({ id: ask.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
    expect((await sim.response(pid)).result).toEqual({ stopReason: 'end_turn' });
    const after = sim.messages.slice(askIndex + 1).filter((m) => m.method === 'session/update').map((m) => m.params.update);
    expect(after[0]).toMatchObject({ sessionUpdate: 'tool_call_update', status: 'completed', toolCallId: ask.params.toolCall.toolCallId });
    expect(after.slice(1).map((u) => u.content.text).join('')).toBe('SIM ECHO: make a file');

    // yolo auto-approves: no question asked.
    await sim.result('session/set_mode', { sessionId, modeId: 'yolo' });
    const before = sim.messages.filter((m) => m.method === 'session/request_permission').length;
    await sim.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'again' }] });
    expect(sim.messages.filter((m) => m.method === 'session/request_permission').length).toBe(before);
  });

  it('AGY_SIM_WRITE_INTERVAL_MS appends ~20 KB steps rows while a session is open', async () => {
    const home = tmp();
    const sim = await authedSim({ AGY_SIM_WRITE_INTERVAL_MS: '40' }, home);
    const { sessionId } = await newSession(sim);
    const db = convPath(home, sessionId);
    const rows = await until('filler rows', () => {
      const r = queryLive<{ n: number; len: number }>(db, 'SELECT COUNT(*) AS n, MIN(LENGTH(step_payload)) AS len FROM steps WHERE step_type = 99')[0]!;
      return r.n >= 4 ? r : undefined;
    });
    expect(rows.len).toBe(20 * 1024);
    await sim.result('session/close', { sessionId });
    const n1 = queryLive<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM steps')[0]!.n;
    await sleep(200);
    expect(queryLive<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM steps')[0]!.n).toBe(n1);
  });
});

describe('session/load across restarts', () => {
  async function conversationOnDisk(home: string): Promise<string> {
    const sim = await authedSim({}, home);
    const { sessionId } = await newSession(sim, '/work/load');
    await sim.result('session/set_config_option', { sessionId, configId: 'model', value: 'gemini-3.8-flash-low' });
    await sim.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'first question' }] });
    await sim.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Reply with exactly: second answer' }] });
    expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
    return sessionId;
  }

  it('a plain exit leaves the WAL un-checkpointed; the new process replays full-text history', async () => {
    const home = tmp();
    const sessionId = await conversationOnDisk(home);
    const db = convPath(home, sessionId);
    expect(statSync(`${db}-wal`).size).toBeGreaterThan(0);
    const copy = join(tmp(), 'c.db');
    copyFileSync(db, copy);
    expect(tablesOf(copy)).toEqual([]);

    const sim = new Sim(home); // settings + token from the first run: no authenticate needed
    const id = sim.start('session/load', { sessionId, cwd: '/work/load', mcpServers: [] });
    const r = await sim.response(id);
    expect(r.result).toEqual(expectedSessionState()); // model reset to the default
    const updates = sim.updates(sessionId).map((m) => m.params.update);
    expect(updates).toEqual([
      { content: { text: 'first question', type: 'text' }, sessionUpdate: 'user_message_chunk' },
      { content: { text: 'SIM ECHO: first question', type: 'text' }, sessionUpdate: 'agent_message_chunk' },
      { content: { text: 'Reply with exactly: second answer', type: 'text' }, sessionUpdate: 'user_message_chunk' },
      { content: { text: 'second answer', type: 'text' }, sessionUpdate: 'agent_message_chunk' },
      AVAILABLE_COMMANDS,
    ]);
    const lastUpdate = sim.messages.findLastIndex((m) => m.method === 'session/update');
    expect(lastUpdate).toBeLessThan(sim.responseIndex(id));

    // The loaded session is live again.
    await sim.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'third' }] });
    expect(queryLive(db, 'SELECT COUNT(*) AS n FROM steps')).toEqual([{ n: 6 }]);
  });

  it('AGY_SIM_CHECKPOINT_ON_EXIT=1 checkpoints on EOF', async () => {
    const home = tmp();
    const sim = await authedSim({ AGY_SIM_CHECKPOINT_ON_EXIT: '1' }, home);
    const { sessionId } = await newSession(sim);
    await sim.result('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x' }] });
    expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
    const db = convPath(home, sessionId);
    expect(existsSync(`${db}-wal`)).toBe(false);
    const copy = join(tmp(), 'c.db');
    copyFileSync(db, copy);
    expect(tablesOf(copy).length).toBe(7);
  });

  it('an unknown session id is "Session not found"', async () => {
    const sim = await authedSim();
    const r = await sim.request('session/load', { sessionId: '11111111-2222-4333-8444-555555555555', cwd: '/w', mcpServers: [] });
    expect(r.error).toEqual({
      code: -32000,
      message: 'Session not found',
      data: { message: 'Session not found: 11111111-2222-4333-8444-555555555555' },
    });
    const traversal = await sim.request('session/load', { sessionId: '../../settings', cwd: '/w', mcpServers: [] });
    expect(traversal.error.message).toBe('Session not found');
  });

  it('a .db file that is not a conversation is "Session not found"', async () => {
    const home = tmp();
    const sim = await authedSim({}, home);
    const sessionId = '22222222-3333-4444-8555-666666666666';
    mkdirSync(join(stateDir(home), 'conversations'), { recursive: true });
    writeFileSync(convPath(home, sessionId), '');
    const r = await sim.request('session/load', { sessionId, cwd: '/w', mcpServers: [] });
    expect(r.error.message).toBe('Session not found');
  });

  it('AGY_SIM_FORGET_SESSIONS=1 makes every load fail', async () => {
    const home = tmp();
    const sessionId = await conversationOnDisk(home);
    const sim = new Sim(home, { AGY_SIM_FORGET_SESSIONS: '1' });
    const r = await sim.request('session/load', { sessionId, cwd: '/work/load', mcpServers: [] });
    expect(r.error.message).toBe('Session not found');
    expect(sim.updates(sessionId)).toEqual([]);
  });

  it('session/load needs authentication', async () => {
    const home = tmp();
    const sessionId = await conversationOnDisk(home);
    rmSync(join(stateDir(home), 'acp_token.json'));
    const sim = new Sim(home);
    const r = await sim.request('session/load', { sessionId, cwd: '/work/load', mcpServers: [] });
    expect(r.error).toEqual(authRequired(home));
  });
});
