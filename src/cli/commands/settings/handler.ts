/**
 * The three `agyctl settings` subcommands: gather, print for a person, and
 * hand main the --json document. Secret values never reach any output:
 * environment variables are reported as set / not set only.
 */
import { EXIT } from '../../../core/errors.js';
import { AUTH_TYPE_INFO, normalizeAuthType } from '../../../settings/auth-types.js';
import { ownerName } from '../../../settings/owner.js';
import { readSettings, type SettingsFile } from '../../../settings/read.js';
import { restartNotice, runningServers, type ServerProcess } from '../../../settings/servers.js';
import {
  envReport,
  gcpOf,
  hasErrors,
  modeString,
  type Problem,
  problemsOf,
  rawAuthType,
  whereToSetEnv,
} from '../../../settings/validate.js';
import { type SetAuthOptions, type SetAuthResult, setAuthType } from '../../../settings/write.js';
import type { CommandResult, HandlerArgs, HandlerIO } from '../../action.js';

function fileSummary(file: SettingsFile): Record<string, unknown> {
  const raw = rawAuthType(file.data);
  const norm = normalizeAuthType(raw);
  const { project, location } = gcpOf(file.error?.kind === 'shape' ? undefined : file.data);
  return {
    path: file.path,
    exists: file.exists,
    symlink: file.symlink,
    target: file.target,
    mode: file.mode === undefined ? null : modeString(file.mode),
    uid: file.uid ?? null,
    owner: file.uid === undefined ? null : (ownerName(file.uid) ?? null),
    authType: norm?.type ?? null,
    authTypeRaw: raw ?? null,
    project: project ?? null,
    location: location ?? null,
    parseError: file.error ?? null,
  };
}

/**
 * validate fails on an error (exit 2) and says "error:"; show reports and exits 0, so an error there is a
 * "finding" (the server cannot use the file as it is), never an "error:" line beside a zero exit.
 */
function printProblems(io: HandlerIO, problems: readonly Problem[], asFindings = false): void {
  const header = asFindings ? 'findings' : 'problems';
  io.out.print(problems.length === 0 ? `${header}: none` : `${header}:`);
  for (const p of problems) {
    io.out.print(`  ${asFindings && p.severity === 'error' ? 'finding' : p.severity}: ${p.message}`);
    io.out.print(`    fix: ${p.hint}`);
  }
}

function printServers(io: HandlerIO, servers: readonly ServerProcess[]): void {
  if (servers.length === 0) io.out.print('servers:   none running for this state directory');
  for (const s of servers) {
    const env = s.env.map((e) => `${e.name} ${e.set === undefined ? 'unknown' : e.set ? 'set' : 'not set'}`).join(', ');
    io.out.print(`server:    pid ${s.pid} (${s.command})${env ? `; its environment: ${env}` : ''}`);
  }
}

export function runShow(io: HandlerIO): CommandResult {
  const file = readSettings(io.opts.stateDir);
  const summary = fileSummary(file);
  const type = normalizeAuthType(rawAuthType(file.data))?.type;
  const env = envReport(type, io.ctx.env);
  const servers = runningServers(io.opts.stateDir, type);
  const problems = problemsOf(file, io.ctx.env);
  if (!io.opts.json) {
    io.out.print(`settings:  ${file.path}${file.symlink ? ` -> ${file.target}` : ''}`);
    io.out.print(`exists:    ${existsLine(file, summary)}`);
    const rawType = summary.authTypeRaw;
    const legacy = rawType !== null && rawType !== summary.authType ? ` (written as ${JSON.stringify(rawType)})` : '';
    io.out.print(
      `auth.type: ${summary.authType ?? (rawType === null ? '(not set)' : `${JSON.stringify(rawType)} (unknown)`)}${legacy}`,
    );
    io.out.print(`gcp:       project ${summary.project ?? '(not set)'}, location ${summary.location ?? '(not set)'}`);
    for (const e of env) io.out.print(`env:       ${e.name} (${e.need}) ${e.set ? 'set' : 'not set'} in this shell`);
    printServers(io, servers);
    printProblems(io, problems, true);
  }
  return { exit: EXIT.ok, data: { settings: summary, env, servers, problems, usable: !hasErrors(problems) } };
}

export function runValidate(io: HandlerIO): CommandResult {
  const file = readSettings(io.opts.stateDir);
  const problems = problemsOf(file, io.ctx.env);
  const usable = !hasErrors(problems);
  const errors = problems.filter((p) => p.severity === 'error').length;
  if (!io.opts.json) {
    io.out.print(
      usable
        ? `${file.path} is usable${problems.length ? ` (${problems.length} warning${problems.length > 1 ? 's' : ''})` : ''}`
        : `${file.path} is not usable`,
    );
    if (problems.length) printProblems(io, problems);
  }
  const data: Record<string, unknown> = { settings: { path: file.path, exists: file.exists }, problems, usable };
  if (usable) return { exit: EXIT.ok, data };
  const message = `settings.json is not usable: ${errors} error${errors > 1 ? 's' : ''}`;
  io.out.error(message, problems.find((p) => p.severity === 'error')!.hint);
  return { exit: EXIT.usage, data: { ...data, error: { code: 'settings-invalid', exit: EXIT.usage, message } } };
}

/** `agyctl settings set-auth`'s own flags, as commander produces them (register.ts). */
export interface SetAuthFlags {
  project?: string;
  location?: string;
  force?: boolean;
}

/** The flags become SetAuthOptions, the one type setAuthType takes; `<type>` is required, so commander has refused its absence already. */
export function runSetAuth(io: HandlerIO, { args, options: flags }: HandlerArgs<SetAuthFlags>): CommandResult {
  const [type] = args;
  if (typeof type !== 'string') throw new TypeError('set-auth: commander passed no <type>');
  const options: SetAuthOptions = {
    project: flags.project,
    location: flags.location,
    force: flags.force === true,
    env: io.ctx.env,
  };
  const result = setAuthType(io.opts.stateDir, type, options);
  const servers = result.written ? runningServers(io.opts.stateDir, result.type) : [];
  const file = readSettings(io.opts.stateDir);
  const problems = problemsOf(file, io.ctx.env);
  const env = envReport(result.type, io.ctx.env);
  const notice = result.written ? restartNotice(servers) : undefined;
  if (!io.opts.json) printSetAuth(io, { result, servers, problems, notice });
  return {
    exit: EXIT.ok,
    data: {
      settings: {
        ...fileSummary(file),
        written: result.written,
        created: result.created,
        stateDirCreated: result.stateDirCreated,
        backup: result.backup ?? null,
        previousAuthType: result.previousType ?? null,
        legacyInput: result.legacyInput ?? null,
        projectSource: result.project?.source ?? null,
        locationSource: result.location?.source ?? null,
      },
      env,
      servers,
      restartRequired: servers.length > 0,
      notice: notice ?? null,
      problems,
    },
  };
}

/** What set-auth did and found, for the person: the file written, the servers to restart, the problems left. */
interface SetAuthReport {
  result: SetAuthResult;
  servers: readonly ServerProcess[];
  problems: readonly Problem[];
  notice: string | undefined;
}

function printSetAuth(io: HandlerIO, { result: r, servers, problems, notice }: SetAuthReport): void {
  if (r.legacyInput) io.out.info(`note: "${r.legacyInput}" is the old name of ${r.type}; writing ${r.type}.`);
  if (r.stateDirCreated) io.out.info(`note: created the state directory ${io.opts.stateDir} (mode 0700).`);
  if (r.backup) io.out.print(`Moved the unusable settings file aside to ${r.backup}.`);
  const where = r.symlink ? `${r.path} (symlink to ${r.target})` : r.path;
  // Only what this run set: values kept from the file are not news.
  const gcp = (
    [
      ['project', r.project, 'GOOGLE_CLOUD_PROJECT'],
      ['location', r.location, 'GOOGLE_CLOUD_LOCATION'],
    ] as const
  )
    .filter(([, v]) => v && v.source !== 'file')
    .map(([key, v, envName]) => `gcp.${key} ${v!.value}${v!.source === 'env' ? ` (from ${envName})` : ''}`);
  if (!r.written)
    io.out.print(
      `${where} already has auth.type ${r.type}${gcp.length ? `, ${gcp.join(', ')}` : ''}; nothing written.`,
    );
  else io.out.print(`Wrote auth.type ${r.type}${gcp.length ? `, ${gcp.join(', ')}` : ''} to ${where}.`);
  const envWarned = problems.some((p) => p.id === 'env-not-set');
  if (r.type === 'gemini-api-key' && !envWarned)
    io.out.info(
      `note: the server reads GEMINI_API_KEY from its own environment, never from settings.json: ${whereToSetEnv('GEMINI_API_KEY')}.`,
    );
  if (AUTH_TYPE_INFO[r.type].oauth && r.written)
    io.out.info(
      `note: ${r.type} logs in through the browser flow: run \`agyctl login\` if the server has no token yet.`,
    );
  for (const s of servers) {
    for (const e of s.env)
      if (e.set === false) io.out.warn(`server pid ${s.pid} does not have ${e.name} in its environment.`);
  }
  for (const p of problems) io.out.warn(`${p.message} (fix: ${p.hint})`);
  if (notice) io.out.print(notice);
}

/** What is at the path: a file with its mode and owner, nothing, or why it cannot be read (never "mode ?"). */
function existsLine(
  file: SettingsFile,
  summary: { mode?: string | undefined; owner?: string | undefined; uid?: number | undefined },
): string {
  if (file.unreadable) return `${file.exists ? 'yes, but' : 'no:'} ${file.unreadable}`;
  return file.exists ? `yes (mode ${summary.mode ?? '?'}, owner ${summary.owner ?? summary.uid ?? '?'})` : 'no';
}
