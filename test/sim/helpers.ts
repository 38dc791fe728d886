// Shared setup for the simulator's tests (test/sim/*.test.ts): RC01 fixtures,
// a Sim driver for scripts/agy-acp-sim over stdio, and small network helpers.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { simBuildIsFresh } from '../helpers/fresh-sim.js';
import { ROOT } from '../helpers/root.js';
import { until } from '../helpers/until.js';

export const LAUNCHER = join(ROOT, 'scripts', 'agy-acp-sim');

// ---------------------------------------------------------------- fixtures

export const URL_PREFIX = 'Open the following link to authenticate the ACP server: ';
export const ONBOARDING_FAILED = {
  code: -32000,
  message: 'Onboarding failed: The authentication flow did not complete successfully.',
  data: { reason: 'onboarding_failed' },
};
export const ONBOARDING_TIMED_OUT = {
  code: -32000,
  message: 'Onboarding failed: Timed out waiting for the authentication flow to complete.',
  data: { reason: 'onboarding_failed' },
};
export const REVOKED = {
  code: -32000,
  message: 'Authentication failed',
  data: {
    message: 'Token refresh failed: invalid_grant (Token has been expired or revoked.). Re-authentication required.',
  },
};

export function authRequired(home: string): unknown {
  const settings = join(home, '.gemini', 'antigravity-acp', 'settings.json');
  return {
    code: -32000,
    message: 'Authentication required',
    data: {
      message: `No authentication method selected. Either call the \`authenticate\` method (supports oauth-personal, gemini-api-key, agent-platform), or set \`auth.type\` in settings.json (${settings}) to one of: oauth-personal, gemini-api-key (requires GEMINI_API_KEY env var), oauth-business (Gemini Enterprise; requires gcp.project/location), agent-platform (formerly 'vertex-ai', still accepted; requires GOOGLE_API_KEY, or a project and location from GOOGLE_CLOUD_PROJECT/GOOGLE_CLOUD_LOCATION or gcp.project/gcp.location with Application Default Credentials).`,
    },
  };
}

export const INITIALIZE_RESULT = {
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
    {
      description: 'Log in with your Gemini Enterprise account',
      id: 'oauth-business',
      name: 'Log in with Gemini Enterprise',
    },
    { description: 'Use an API key with Gemini Developer API', id: 'gemini-api-key', name: 'Gemini API key' },
    {
      description:
        'Use Gemini Enterprise Agent Platform (formerly Vertex AI) with Application Default Credentials or an API key',
      id: 'agent-platform',
      name: 'Gemini Enterprise Agent Platform',
    },
  ],
  agentInfo: { name: 'antigravity-acp', title: 'Google Antigravity', version: 'agy_acp_server_20260818_01_RC01' },
};

export const MODELS: Array<[string, string]> = [
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
export const MODES = [
  { id: 'default', name: 'Default', description: 'Default permission prompt flow' },
  { id: 'auto_edit', name: 'Auto Edit', description: 'Auto-approve file edit tools' },
  { id: 'yolo', name: 'YOLO', description: 'Auto-approve all tools' },
];

export function expectedConfigOptions(model: string, mode: string): unknown[] {
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

export function expectedSessionState(model = 'gemini-3.7-flash-high', mode = 'default'): Record<string, unknown> {
  return {
    modes: { currentModeId: mode, availableModes: MODES },
    models: {
      availableModels: MODELS.map(([modelId, name]) => ({ modelId, name, description: modelId })),
      currentModelId: model,
    },
    configOptions: expectedConfigOptions(model, mode),
  };
}

export const AVAILABLE_COMMANDS = {
  availableCommands: [
    {
      name: 'plan',
      description:
        'Plan carefully before executing a task (generates an implementation plan artifact and awaits user approval).',
    },
    { name: 'logout', description: 'Log out and clear stored credentials.' },
  ],
  sessionUpdate: 'available_commands_update',
};

export const DDL = [
  'CREATE TABLE `trajectory_meta` (`trajectory_id` text,`cascade_id` text,`trajectory_type` integer,`source` integer,PRIMARY KEY (`trajectory_id`))',
  'CREATE TABLE `steps` (`idx` integer,`step_type` integer NOT NULL DEFAULT 0,`status` integer NOT NULL DEFAULT 0,`has_subtrajectory` numeric NOT NULL DEFAULT false,`metadata` blob,`error_details` blob,`permissions` blob,`task_details` blob,`render_info` blob,`step_payload` blob,`step_format` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))',
  'CREATE TABLE `gen_metadata` (`idx` integer,`data` blob,`size` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))',
  'CREATE TABLE `executor_metadata` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))',
  'CREATE TABLE `parent_references` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))',
  'CREATE TABLE `trajectory_metadata_blob` (`id` text DEFAULT "main",`data` blob,PRIMARY KEY (`id`))',
  'CREATE TABLE `battle_mode_infos` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))',
];

export const URL_RE = new RegExp(
  '^https://accounts\\.google\\.com/o/oauth2/v2/auth\\?response_type=code' +
    '&client_id=1071006060591-tmhssin2h21lcre235vtolojh4g403ep\\.apps\\.googleusercontent\\.com' +
    '&redirect_uri=http%3A%2F%2F127\\.0\\.0\\.1%3A(\\d+)(%2F[A-Za-z0-9%._-]*)' +
    '&scope=https%3A%2F%2Fwww\\.googleapis\\.com%2Fauth%2Fcloud-platform' +
    '\\+https%3A%2F%2Fwww\\.googleapis\\.com%2Fauth%2Fuserinfo\\.email' +
    '\\+https%3A%2F%2Fwww\\.googleapis\\.com%2Fauth%2Faicode' +
    '&state=([0-9a-f]{32})&access_type=offline&prompt=consent' +
    '&code_challenge=([A-Za-z0-9_-]{43})&code_challenge_method=S256$',
);

export interface ParsedUrl {
  port: number;
  path: string;
  state: string;
}

export function parseAuthUrl(url: string): ParsedUrl {
  const m = URL_RE.exec(url);
  if (!m) throw new Error(`URL does not match the RC01 anatomy: ${url}`);
  return { port: Number(m[1]), path: decodeURIComponent(m[2]!), state: m[3]! };
}

// ---------------------------------------------------------------- helpers

export type Msg = Record<string, any>;

export const tmpRoots: string[] = [];
export function tmp(prefix = 'agy-sim-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tmpRoots.push(d);
  return d;
}

export function stateDir(home: string): string {
  return join(home, '.gemini', 'antigravity-acp');
}

export function writeState(home: string, files: { settings?: unknown; token?: unknown | string }): void {
  mkdirSync(stateDir(home), { recursive: true });
  if (files.settings !== undefined)
    writeFileSync(join(stateDir(home), 'settings.json'), JSON.stringify(files.settings));
  if (files.token !== undefined) {
    const body = typeof files.token === 'string' ? files.token : JSON.stringify(files.token);
    writeFileSync(join(stateDir(home), 'acp_token.json'), body, { mode: 0o600 });
  }
}

export const GOOD_TOKEN = {
  access_token: 'ya29.fixture',
  refresh_token: '1//fixture',
  token_type: 'Bearer',
  expiry_date: 1,
};

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export const ANSI_RE = /\x1b\[[0-9;?]*[A-Za-z]/g;

export const running: Sim[] = [];

export class Sim {
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
      return await until(`response to ${id}`, timeoutMs, () =>
        this.messages.find((m) => m.id === id && ('result' in m || 'error' in m) && !('method' in m)),
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
    return until('a stdout line', timeoutMs, () => this.rawLines.find(pred));
  }

  async closeStdin(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin!.end();
    return this.exited;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.exit === undefined) this.child.kill(signal);
  }
}

export async function authedSim(env: Record<string, string> = {}, home = tmp()): Promise<Sim> {
  writeState(home, { settings: { auth: { type: 'oauth-personal' } }, token: GOOD_TOKEN });
  return new Sim(home, env);
}

export async function newSession(
  sim: Sim,
  cwd = '/work/project',
): Promise<{ id: number; sessionId: string; result: any }> {
  const id = sim.start('session/new', { cwd, mcpServers: [] });
  const r = await sim.response(id);
  if (r.error) throw new Error(`session/new failed: ${JSON.stringify(r.error)}`);
  const sessionId: string = r.result.sessionId;
  // The commands notification follows the response; wait for it so later
  // snapshots of sim.messages start after it.
  await until('available_commands_update', 5_000, () =>
    sim.updates(sessionId).find((m) => m.params.update.sessionUpdate === 'available_commands_update'),
  );
  return { id, sessionId, result: r.result };
}

export function httpRequest(url: string): Promise<{ status: number; body: string }> {
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
export function tcpProbe(port: number): Promise<string> {
  return new Promise((res) => {
    const s = connect(port, '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      res('open');
    });
    s.on('error', (e: NodeJS.ErrnoException) => res(e.code ?? 'error'));
  });
}

export async function waitRefused(port: number, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await tcpProbe(port)) !== 'ECONNREFUSED') {
    if (Date.now() > deadline) throw new Error(`port ${port} still accepts connections`);
    await sleep(20);
  }
}

export function freePort(): Promise<number> {
  return new Promise((res) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => res(port));
    });
  });
}

/** Starts oauth with AGY_SIM_LAUNCH=stdout and returns the parsed URL. */
export async function startOAuth(
  sim: Sim,
  methodId = 'oauth-personal',
): Promise<{ id: number; url: string; parsed: ParsedUrl }> {
  const id = sim.start('authenticate', { methodId });
  const line = await sim.waitForRawLine((l) => l.startsWith(URL_PREFIX));
  const url = line.slice(URL_PREFIX.length);
  return { id, url, parsed: parseAuthUrl(url) };
}

export function tablesOf(dbPath: string): Array<{ name: string; sql: string }> {
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

export function queryLive<T>(dbPath: string, sql: string): T[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

export function convPath(home: string, sessionId: string, ext = 'db'): string {
  return join(stateDir(home), 'conversations', `${sessionId}.${ext}`);
}

export function capturingScript(dir: string, name: string, logFile: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\nprintf '%s|%s\\n' "$#" "$1" >> '${logFile}'\n`);
  chmodSync(path, 0o755);
  return path;
}

// ---------------------------------------------------------------- hooks

/** Register the shared hooks: dist/sim is current (test/helpers/fresh-sim.ts builds it), kill every simulator a test started, remove temp dirs. */
export function useSimulator(): void {
  beforeAll(() => {
    expect(simBuildIsFresh(), 'dist/sim is built and up to date').toBe(true);
  });

  afterEach(() => {
    for (const sim of running.splice(0)) sim.kill();
  });

  afterAll(() => {
    for (const d of tmpRoots) rmSync(d, { recursive: true, force: true });
  });
}
