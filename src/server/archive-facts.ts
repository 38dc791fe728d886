/**
 * What an install knows before it reads the archive: the expected sha256
 * (--sha256, or a SHA256SUMS-style file), the version (--version, else the
 * archive's name, else agent.json), and the command (agent.json's, else the
 * known layout: `./agy_acp_server.par --uid=`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { usageError } from '../core/errors.js';
import { showUntrusted } from '../core/safe-path.js';
import { VERSION_NAME } from '../profiles/installed-server.js';

export const KNOWN_COMMAND = { cmd: './agy_acp_server.par', args: ['--uid='] } as const;
const HEX64 = /^[0-9a-f]{64}$/;

export function checkSha256(value: string): string {
  const hex = value.trim().toLowerCase();
  if (!HEX64.test(hex))
    throw usageError(
      `--sha256 is not a sha256 (${showUntrusted(value)}).`,
      'pass the 64 hex digits the publisher lists',
    );
  return hex;
}

/** The sum a SHA256SUMS-style file gives for the archive's file name (`HEX  name` or `HEX *name`). */
export function sumFromFile(sumsText: string, archive: string): string {
  const base = path.basename(archive);
  for (const line of sumsText.split('\n')) {
    const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.trim());
    if (m && path.basename(m[2] ?? '') === base) return (m[1] ?? '').toLowerCase();
  }
  throw usageError(
    `The sums file names no ${showUntrusted(base)}.`,
    'pass the SHA256SUMS file published with this archive, or --sha256 HEX',
  );
}

/** `…-<version>-linux-…`: the version in a published archive's name. */
export function versionFromName(archive: string): string | undefined {
  const m = /-(\d+(?:\.\d+)+[0-9A-Za-z._+]*)-linux-/.exec(path.basename(archive));
  return m?.[1];
}

export interface AgentJson {
  id?: string;
  version?: string;
  cmd?: string;
  args?: string[];
}

const PLATFORM: Partial<Record<string, string>> = { x64: 'linux-x86_64', arm64: 'linux-aarch64' };

/** The registry's agent.json: its version and this platform's command and args. */
export function readAgentJson(file: string, arch = process.arch): AgentJson {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw usageError(
      `Cannot read --agent-json ${showUntrusted(file, 200)}: ${(err as Error).message}`,
      "pass the registry's <agent>/agent.json",
    );
  }
  const doc = (value ?? {}) as {
    id?: unknown;
    version?: unknown;
    distribution?: { binary?: Record<string, { cmd?: unknown; args?: unknown }> };
  };
  const platform = doc.distribution?.binary?.[PLATFORM[arch] ?? ''];
  const out: AgentJson = {};
  if (typeof doc.id === 'string') out.id = doc.id;
  if (typeof doc.version === 'string') out.version = doc.version;
  if (platform && typeof platform.cmd === 'string') out.cmd = platform.cmd;
  if (platform && Array.isArray(platform.args) && platform.args.every((a) => typeof a === 'string'))
    out.args = platform.args as string[];
  return out;
}

/** The version: --version, else the archive's name, else agent.json; none is a usage error naming --version. */
export function chooseVersion(flag: string | undefined, archive: string, agent: AgentJson | undefined): string {
  const version = flag ?? versionFromName(archive) ?? agent?.version;
  if (version === undefined)
    throw usageError(
      `Cannot tell the version of ${showUntrusted(path.basename(archive), 120)} from its name.`,
      'pass --version V (or --agent-json FILE with a version)',
    );
  if (!VERSION_NAME.test(version) || version === 'current')
    throw usageError(
      `The version ${showUntrusted(version)} is not a plain name.`,
      'pass --version V with letters, digits and . _ + - only',
    );
  return version;
}

/** The command relative to the version's directory: agent.json's when it stays inside, else the known layout. */
export function chooseCommand(agent: AgentJson | undefined): { cmd: string; args: string[] } {
  const cmd = agent?.cmd ?? KNOWN_COMMAND.cmd;
  const normal = path.posix.normalize(cmd);
  if (cmd.startsWith('/') || normal.startsWith('..'))
    throw usageError(
      `agent.json's cmd ${showUntrusted(cmd)} is not inside the archive.`,
      'pass the registry agent.json for this build',
    );
  return { cmd: normal, args: agent?.args ? [...agent.args] : [...KNOWN_COMMAND.args] };
}
