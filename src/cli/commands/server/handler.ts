/** `agyctl server …`: flags -> src/server (install.ts, manage.ts), printed with render.ts. */
import { EXIT, usageError } from '../../../core/errors.js';
import { resolveUserPath } from '../../../core/paths.js';
import { profileOf } from '../../../profiles/index.js';
import { defaultServerPrefix } from '../../../profiles/installed-server.js';
import type { CommandResult, HandlerArgs, HandlerIO } from '../../action.js';
import { parseCountOption, parseDurationOption } from '../../parse-options.js';
import * as render from './render.js';

export interface PrefixFlags {
  prefix?: string;
}
export interface ProveFlags extends PrefixFlags {
  /** --no-prove makes it false. */
  prove?: boolean;
  timeout: string;
}
export interface InstallFlags extends ProveFlags {
  sha256?: string;
  sums?: string;
  version?: string;
  agentJson?: string;
  force?: boolean;
}
export interface PruneFlags extends PrefixFlags {
  keep: string;
}

function prefixOf(io: HandlerIO, flags: PrefixFlags): string {
  if (flags.prefix === undefined) return defaultServerPrefix(io.ctx.env);
  if (flags.prefix.trim() === '')
    throw usageError('--prefix is empty.', 'pass a directory, or leave --prefix out for the default');
  return resolveUserPath(io.ctx.cwd, flags.prefix, io.ctx.env);
}

/** A file-system problem under the prefix is the user's to fix (exit 2 or 6 with a hint), never a bug. */
async function underPrefix<T>(prefix: string, work: () => Promise<T>): Promise<T> {
  const { withFsErrors } = await import('../../../util/fs-errors.js');
  // A write through a descriptor (ENOSPC) names no path: it is the prefix's.
  return withFsErrors(
    { defaultPath: prefix, roots: [{ dir: prefix, role: 'the server prefix', also: 'or pass another --prefix' }] },
    work,
  );
}

function nameOf(io: HandlerIO): string {
  const name = profileOf(io.opts).installedName;
  if (!name)
    throw usageError(
      'agyctl installs only the antigravity-acp server.',
      'drop --profile, or install this server by its own means',
    );
  return name;
}

const proofSetup = (flags: ProveFlags) => ({
  prove: flags.prove !== false,
  timeoutMs: parseDurationOption('--timeout', flags.timeout),
});

function print(io: HandlerIO, lines: string[]): void {
  if (!io.opts.json) for (const line of lines) io.out.print(line);
}

export async function installCommand(
  io: HandlerIO,
  { args, options }: HandlerArgs<InstallFlags>,
): Promise<CommandResult> {
  const { installServer } = await import('../../../server/install.js');
  const archive = resolveUserPath(io.ctx.cwd, String(args[0]), io.ctx.env);
  const prefix = prefixOf(io, options);
  const report = await underPrefix(prefix, () =>
    installServer(io, {
      archive,
      sha256: options.sha256,
      sumsFile: options.sums === undefined ? undefined : resolveUserPath(io.ctx.cwd, options.sums, io.ctx.env),
      version: options.version,
      agentJson:
        options.agentJson === undefined ? undefined : resolveUserPath(io.ctx.cwd, options.agentJson, io.ctx.env),
      prefix,
      name: nameOf(io),
      force: Boolean(options.force),
      ...proofSetup(options),
    }),
  );
  print(io, render.installLines(report));
  return { exit: EXIT.ok, data: { install: report } };
}

export async function listCommand(io: HandlerIO, { options }: HandlerArgs<PrefixFlags>): Promise<CommandResult> {
  const { listServers } = await import('../../../server/manage.js');
  const prefix = prefixOf(io, options);
  const servers = await underPrefix(prefix, () => listServers(prefix, nameOf(io)));
  print(io, render.listLines(servers));
  return { exit: EXIT.ok, data: { servers } };
}

export async function useCommand(io: HandlerIO, { args, options }: HandlerArgs<ProveFlags>): Promise<CommandResult> {
  const { useServer } = await import('../../../server/manage.js');
  const prefix = prefixOf(io, options);
  const report = await underPrefix(prefix, () =>
    useServer(io, prefix, nameOf(io), String(args[0]), proofSetup(options)),
  );
  print(io, render.useLines(report));
  return { exit: EXIT.ok, data: { use: report } };
}

export async function removeCommand(
  io: HandlerIO,
  { args, options }: HandlerArgs<PrefixFlags>,
): Promise<CommandResult> {
  const { removeServer } = await import('../../../server/manage.js');
  const prefix = prefixOf(io, options);
  const removed = await underPrefix(prefix, () => removeServer(prefix, nameOf(io), String(args[0])));
  print(io, [`removed ${removed.version} (${removed.path})`]);
  return { exit: EXIT.ok, data: { removed } };
}

export async function pruneCommand(io: HandlerIO, { options }: HandlerArgs<PruneFlags>): Promise<CommandResult> {
  const keep = parseCountOption('--keep', options.keep);
  const { pruneServers } = await import('../../../server/manage.js');
  const prefix = prefixOf(io, options);
  const result = await underPrefix(prefix, () => pruneServers(prefix, nameOf(io), keep));
  print(io, render.pruneLines(result));
  return { exit: EXIT.ok, data: result };
}

export async function statusCommand(io: HandlerIO, { options }: HandlerArgs<ProveFlags>): Promise<CommandResult> {
  const { serverStatus } = await import('../../../server/manage.js');
  const prefix = prefixOf(io, options);
  const status = await underPrefix(prefix, () => serverStatus(io, prefix, nameOf(io), proofSetup(options)));
  print(io, render.statusLines(status));
  const exit =
    status.proof && status.proof.exit !== EXIT.ok ? status.proof.exit : status.mismatch ? EXIT.findings : EXIT.ok;
  return { exit, data: { status } };
}
