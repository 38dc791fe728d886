/** What a server says about itself in initialize, redacted and in one shape (probe, check --live, login). */
import type { InitializeResult } from './protocol.js';
import { serverText, serverValue } from './redact.js';

export interface InitDescription {
  agent: { name: string | null; title: string | null; version: string | null };
  protocolVersion: number | null;
  authMethods: string[];
  capabilities: Record<string, unknown>;
}

/** Server-given names, one line, redacted: they are printed and stored. */
const shown = (v: unknown): string | null =>
  v === undefined || v === null ? null : serverText(String(v), { singleLine: true });

export function describeInit(init: InitializeResult): InitDescription {
  return {
    agent: {
      name: shown(init.agentInfo?.name),
      title: shown(init.agentInfo?.title),
      version: shown(init.agentInfo?.version),
    },
    protocolVersion: typeof init.protocolVersion === 'number' ? init.protocolVersion : null,
    authMethods: Array.isArray(init.authMethods) ? init.authMethods.map((m) => shown(m.id) ?? '') : [],
    capabilities: (serverValue(init.agentCapabilities) as Record<string, unknown> | undefined) ?? {},
  };
}
