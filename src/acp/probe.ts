/** The probe: spawn, initialize, describe, stop. Proves the stack end to end. */
import { withServer } from './lifecycle.js';
import { serverStartOptions } from '../profiles/server-start.js';
import type { CommandIO } from '../core/io.js';
import type { InitializeResult } from './protocol.js';
import { adoptDetectedProfile } from '../profiles/adopt.js';
import { serverText, serverValue } from './redact.js';

export interface ProbeReport {
  server: string;
  pid: number;
  /** The server profile in use after initialize (a guess corrected by agentInfo.name). */
  profile: string;
  agent: { name: string | null; title: string | null; version: string | null };
  protocolVersion: number | null;
  authMethods: string[];
  capabilities: Record<string, unknown>;
  timings: { spawnToInitializeMs: number };
}

/** Server-given names, one line, redacted: they are printed and stored. */
const shown = (v: unknown): string | null => (v === undefined || v === null ? null : serverText(String(v), { singleLine: true }));

export function describeInit(init: InitializeResult): Pick<ProbeReport, 'agent' | 'protocolVersion' | 'authMethods' | 'capabilities'> {
  return {
    agent: { name: shown(init.agentInfo?.name), title: shown(init.agentInfo?.title), version: shown(init.agentInfo?.version) },
    protocolVersion: typeof init.protocolVersion === 'number' ? init.protocolVersion : null,
    authMethods: Array.isArray(init.authMethods) ? init.authMethods.map((m) => shown(m.id) ?? '') : [],
    capabilities: (serverValue(init.agentCapabilities) as Record<string, unknown> | undefined) ?? {},
  };
}

export async function runProbe(io: CommandIO, timeoutMs: number): Promise<ProbeReport> {
  const options = serverStartOptions(io, { initTimeoutMs: timeoutMs });
  return withServer(options, async ({ server, init, initMs }) => ({
    server: options.command.display,
    pid: server.pid,
    profile: adoptDetectedProfile(io, init).profile.id,
    ...describeInit(init),
    timings: { spawnToInitializeMs: initMs },
  }));
}

function flagList(caps: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(caps)) {
    if (v && typeof v === 'object' && Object.keys(v).length > 0) out.push(...flagList(v as Record<string, unknown>, `${prefix}${k}.`));
    else if (v !== false && v !== null) out.push(`${prefix}${k}`);
  }
  return out;
}

export function renderProbe(r: ProbeReport): string[] {
  return [
    `agent:        ${r.agent.title ?? r.agent.name ?? 'unknown'}${r.agent.name ? ` (${r.agent.name})` : ''}`,
    `build:        ${r.agent.version ?? 'unknown'}`,
    `protocol:     ${r.protocolVersion ?? 'unknown'}`,
    `auth methods: ${r.authMethods.join(', ') || 'none advertised'}`,
    `capabilities: ${flagList(r.capabilities).join(', ') || 'none'}`,
    `start-up:     ${r.timings.spawnToInitializeMs} ms (spawn to initialize)`,
    `server:       ${r.server}`,
    `profile:      ${r.profile}`,
  ];
}
