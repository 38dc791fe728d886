/** Human lines for `agyctl probe`. */
import type { ProbeReport } from '../../../probe/probe.js';

function flagList(caps: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(caps)) {
    if (v && typeof v === 'object' && Object.keys(v).length > 0)
      out.push(...flagList(v as Record<string, unknown>, `${prefix}${k}.`));
    else if (v !== false && v !== null) out.push(`${prefix}${k}`);
  }
  return out;
}

export function renderProbe(r: ProbeReport): string[] {
  return [
    `agent:        ${r.agent.title ?? r.agent.name ?? 'unknown'}${r.agent.name ? ` (${r.agent.name})` : ''}`,
    `build:        ${r.agent.version ?? 'unknown'}`,
    `protocol:     ${r.protocolVersion ?? 'unknown'}`,
    `auth methods: ${r.authMethods.map((m) => `${m} (${r.authMethodTypes[m] ?? 'agent'})`).join(', ') || 'none advertised'}`,
    `capabilities: ${flagList(r.capabilities).join(', ') || 'none'}`,
    `start-up:     ${r.timings.spawnToInitializeMs} ms (spawn to initialize)`,
    `server:       ${r.server}`,
    `profile:      ${r.profile}`,
  ];
}
