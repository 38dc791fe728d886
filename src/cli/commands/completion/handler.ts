/** `agyctl completion SHELL` and the hidden `agyctl __complete snapshots`. */
import type { Command } from 'commander';
import { EXIT } from '../../../core/errors.js';
import { defaultBackupDir, resolveUserPath } from '../../../core/paths.js';
import { agyctlVersion } from '../../../core/runtime.js';
import type { CommandResult, HandlerArgs, HandlerIO } from '../../action.js';

/** `completion` has no flags of its own (the shell is its argument). */
export type CompletionFlags = Record<string, never>;

export interface CompleteFlags {
  from: string | undefined;
}

export async function completionCommand(
  io: HandlerIO,
  { args }: HandlerArgs<CompletionFlags>,
  program: Command,
): Promise<CommandResult> {
  const { completionScript, SHELLS } = await import('../../completion.js');
  const shell = SHELLS.find((s) => s === args[0]);
  if (shell === undefined) throw new Error(`commander let through shell ${String(args[0])}`);
  const script = completionScript(program, shell);
  io.out.print(script.trimEnd());
  return { exit: EXIT.ok, data: { completion: { shell, script } } };
}

/** The man pages (src/cli/man-pages.ts): with --json one document `{ pages: [{ file, roff }] }`, else the pages one after the other. */
export async function manPagesCommand(io: HandlerIO, program: Command): Promise<CommandResult> {
  const { manPages } = await import('../../man-pages.js');
  const pages = manPages(program, agyctlVersion());
  if (!io.opts.json) for (const page of pages) io.out.print(page.roff.trimEnd());
  return { exit: EXIT.ok, data: { pages } };
}

/**
 * Snapshot names, newest first: complete ones only (a real directory with a
 * manifest, named by the snapshot pattern), so nothing else in the directory
 * reaches the shell. A directory that cannot be read lists nothing: a TAB
 * must never print an error into the command line being typed.
 */
export async function completeValues(io: HandlerIO, { options }: HandlerArgs<CompleteFlags>): Promise<CommandResult> {
  const { listSnapshots } = await import('../../../backup/layout.js');
  const dir =
    options.from === undefined ? defaultBackupDir(io.ctx.env) : resolveUserPath(io.ctx.cwd, options.from, io.ctx.env);
  let names: string[] = [];
  try {
    names = listSnapshots(dir).map((s) => s.name);
  } catch {
    names = [];
  }
  for (const name of names) io.out.print(name);
  return { exit: EXIT.ok, data: { snapshots: names } };
}
