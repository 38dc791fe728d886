/** The options every command takes, and how they become GlobalOptions. */
import { type Command, Option } from 'commander';
import { usageError } from '../core/errors.js';
import { resolveStateDir } from '../core/paths.js';
import { defaultStateDirFor, resolveProfile } from '../profiles/choose.js';
import type { GlobalOptions, RunContext } from './action.js';
import { wantColor } from './terminal/output.js';

export function addGlobalOptions(program: Command): Command {
  return program
    .addOption(
      new Option(
        '--profile <name>',
        'server profile: antigravity or gemini-cli (env AGYCTL_PROFILE; default: from the server command, corrected by what the server reports)',
      ),
    )
    .addOption(
      new Option(
        '--state-dir <dir>',
        'server state directory (env AGYCTL_STATE_DIR; default ~/.gemini/antigravity-acp, or ~/.gemini for gemini-cli)',
      ),
    )
    .addOption(
      new Option(
        '--server <cmd>',
        'server command line, split like a shell (env AGYCTL_SERVER; default: the one `agyctl server install` installed, else agy_acp_server, agy_acp_server.par or antigravity-acp on PATH)',
      ),
    )
    .option('--json', 'machine-readable output on stdout (see docs/json.md)')
    .option('--no-color', 'no colour (also NO_COLOR, or when not a TTY)')
    .option('-v, --verbose', 'more detail on stderr')
    .addOption(new Option('--trace <file>', 'write every protocol message (redacted) to FILE as JSONL'));
}

export function globalOptionsFrom(raw: Record<string, unknown>, ctx: RunContext): GlobalOptions {
  const flag = raw.server as string | undefined;
  // An empty --server is a slip (an unset variable in a script), not "search PATH": refuse it. An empty AGYCTL_SERVER means unset.
  if (flag !== undefined && flag.trim() === '')
    throw usageError(
      '--server is empty.',
      'give the server command (e.g. --server /opt/agy/agy_acp_server), or leave --server out to look for it on PATH',
    );
  const server = flag ?? (ctx.env.AGYCTL_SERVER || undefined);
  const profile = resolveProfile(raw.profile as string | undefined, ctx.env, server);
  const stateDirFlag = raw.stateDir as string | undefined;
  // Like --server: an empty --state-dir is an unset variable in a script, not "the default".
  if (stateDirFlag !== undefined && stateDirFlag.trim() === '')
    throw usageError(
      '--state-dir is empty.',
      'give the server state directory (e.g. --state-dir ~/.gemini/antigravity-acp), or leave --state-dir out for the default',
    );
  return {
    stateDir: resolveStateDir(stateDirFlag, ctx.env, ctx.cwd, defaultStateDirFor(profile.id)),
    server,
    profile: profile.id,
    profileSource: profile.source,
    stateDirExplicit: Boolean(stateDirFlag ?? ctx.env.AGYCTL_STATE_DIR),
    json: Boolean(raw.json),
    color: wantColor(raw.color !== false, ctx.env),
    verbose: Boolean(raw.verbose),
    trace: raw.trace as string | undefined,
  };
}
