/** Human lines for `agyctl server …`. */
import type { InstallReport } from '../../../server/install.js';
import type { ServerEntry, StatusReport, UseReport } from '../../../server/manage.js';
import type { ProofStep } from '../../../server/prove.js';

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

function proofLines(proof: ProofStep[] | null): string[] {
  if (!proof) return ['not proven (--no-prove)'];
  return proof.map((s) => `proven: ${s.step} ok${s.reportedVersion ? ` (server reports ${s.reportedVersion})` : ''}`);
}

export function installLines(r: InstallReport): string[] {
  return [
    `installed ${r.name} ${r.version} in ${r.path} (${mb(r.bytes)}, sha256 ${r.sha256})`,
    `current: ${r.version}${r.previous ? ` (was ${r.previous})` : ''}`,
    ...proofLines(r.proof),
    ...(r.swept.length ? [`removed what an interrupted install left: ${r.swept.join(', ')}`] : []),
  ];
}

export function listLines(servers: ServerEntry[]): string[] {
  if (servers.length === 0) return ['no server installed here (agyctl server install ARCHIVE --sha256 HEX)'];
  return servers.map(
    (s) =>
      `${s.current ? '*' : ' '} ${s.version.padEnd(16)} ${mb(s.bytes).padStart(10)}  ${s.installedAt}  ${s.sha256.slice(0, 12)}  ${s.path}`,
  );
}

export function useLines(r: UseReport): string[] {
  return [`current: ${r.version}${r.previous ? ` (was ${r.previous})` : ''}`, ...proofLines(r.proof)];
}

export function pruneLines(r: { removed: ServerEntry[]; kept: ServerEntry[] }): string[] {
  return [
    ...r.removed.map((s) => `removed ${s.version}`),
    `kept: ${r.kept.map((s) => `${s.version}${s.current ? ' (current)' : ''}`).join(', ') || 'none'}`,
  ];
}

export function statusLines(s: StatusReport): string[] {
  if (!s.installed) return ['no server installed here (agyctl server install ARCHIVE --sha256 HEX)'];
  const reported = s.reported ?? (s.proof?.message ? `did not start: ${s.proof.message}` : 'unknown');
  return [
    `installed: ${s.installed.version} (${s.installed.path})`,
    `server reports: ${reported}`,
    ...(s.mismatch ? [`finding: the server reports another version than the installed ${s.installed.version}`] : []),
  ];
}
