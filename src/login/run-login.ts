/**
 * agyctl login, end to end: preflight, sign in, check the token file,
 * reconcile settings.json, and prove the credentials in a fresh server.
 */
import fs from 'node:fs';
import { AgyError, EXIT, usageError } from '../errors.js';
import { resolveServerCommand } from '../acp/resolve.js';
import type { CommandIO } from '../cli/context.js';
import { parseSettingsText, readSettings } from '../settings/index.js';
import { profileOf, type ServerProfile } from '../profiles/index.js';
import { adoptDetectedProfile } from '../profiles/adopt.js';
import { authTypeKey, configuredMethod, rawAuthTypeFor, readProfileSettings, writeAuthType } from '../profiles/auth-setting.js';
import type { InitializeResult } from '../acp/protocol.js';
import { signIn, isBrowserMethod, type SignInOptions } from './sign-in.js';
import { checkAndFixTokenFile, type TokenFileReport } from './token-file.js';
import { proveCredentials, type ProofResult } from './prove.js';
import type { TunnelTarget } from './tunnel.js';

export interface LoginOptions {
  method: string | undefined;
  timeoutMs: number;
  target: TunnelTarget;
  qr: boolean;
  open: boolean;
  fakeDisplay: boolean;
  keepProbeSession: boolean;
  proofTimeoutMs: number;
}

export interface LoginReport {
  method: string;
  url: { port: number | null; redirectUri: string; source: string; mode: 'loopback' | 'code-entry' } | undefined;
  tokenFile: TokenFileReport | undefined;
  settings: { before: unknown; after: unknown; changedByServer: boolean; wroteAuthType: boolean };
  proof: ProofResult;
}

interface Preflight {
  method: string;
  settingsRaw: string | undefined;
}

/** The settings as they were before the server ran (re-read when the server turned out to be another profile). */
function snapshotSettings(io: CommandIO): string | undefined {
  return readSettings(io.opts.stateDir).raw;
}

function preflight(io: CommandIO, requested: string | undefined): Preflight {
  const profile = profileOf(io.opts);
  const dir = io.opts.stateDir;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    throw usageError(`The state directory ${dir} is not writable by you.`, `fix its owner or mode, or pass --state-dir`);
  }
  const settings = readProfileSettings(profile, dir);
  if (settings.unreadable) throw usageError(`Cannot read ${settings.path}: ${settings.unreadable}.`, 'fix the file, or move it aside and run `agyctl settings set-auth oauth-personal`');
  if (settings.error) throw usageError(`${settings.path} line ${settings.error.line} column ${settings.error.column}: ${settings.error.message}.`, 'fix the file (agyctl settings validate shows every problem), or run `agyctl settings set-auth TYPE --force` to move it aside');
  resolveServerCommand(io.opts.server, io.ctx.env, io.ctx.cwd, profile); // exit 4 now rather than after a shim dir exists
  const configured = configuredMethod(profile, settings.data);
  const method = requested ?? configured ?? 'oauth-personal';
  if (requested && configured && configured !== requested) io.out.warn(`settings.json says ${authTypeKey(profile)} ${configured}, but you asked for --method ${requested}; the server will use ${configured} after a restart unless you change it${profile.id === 'antigravity' ? ` (agyctl settings set-auth ${requested})` : ''}`);
  if (profile.quirks.authWindowMs !== undefined) io.out.verbose(`${profile.title} gives up on a sign-in after ${profile.quirks.authWindowMs / 60_000} minutes, whatever --timeout says`);
  return { method, settingsRaw: settings.raw };
}

/** The server may rewrite settings.json during a login (reported for some builds); and it needs auth.type to find the credentials after a restart. */
function reconcileSettings(io: CommandIO, pre: Preflight, profile: ServerProfile): LoginReport['settings'] {
  const key = authTypeKey(profile);
  const now = readProfileSettings(profile, io.opts.stateDir);
  const before = pre.settingsRaw === undefined ? undefined : rawAuthTypeFor(profile, parseSettingsText(pre.settingsRaw, { comments: profile.settingsComments }).data);
  const changedByServer = now.raw !== pre.settingsRaw;
  if (changedByServer) {
    io.out.event({ event: 'settings-changed', by: 'server', authTypeBefore: before ?? null, authTypeAfter: rawAuthTypeFor(profile, now.data) ?? null });
    const note = `the server changed settings.json during the login (${key} ${String(before ?? 'unset')} -> ${String(rawAuthTypeFor(profile, now.data) ?? 'unset')})`;
    // gemini-cli records the method it just used by design; elsewhere a rewrite may have replaced the user's choice.
    if (profile.quirks.writesAuthTypeOnLogin) io.out.info(note);
    else io.out.warn(note);
  }
  let wroteAuthType = false;
  const current = rawAuthTypeFor(profile, now.data);
  if (current === undefined && !now.error) {
    writeAuthType(profile, io.opts.stateDir, pre.method, io.ctx.env);
    wroteAuthType = true;
    io.out.event({ event: 'settings-changed', by: 'agyctl', authTypeBefore: null, authTypeAfter: pre.method });
    io.out.info(`settings.json had no ${key}; wrote ${key} = ${pre.method} so the server finds these credentials after a restart`);
  } else if (current !== pre.method) {
    io.out.warn(`settings.json names ${key} ${String(current)}, not ${pre.method}; left unchanged. The server will use ${String(current)} after a restart${profile.id === 'antigravity' ? ` (change it with: agyctl settings set-auth ${pre.method})` : ''}`);
  }
  return { before: before ?? null, after: rawAuthTypeFor(profile, readProfileSettings(profile, io.opts.stateDir).data) ?? null, changedByServer, wroteAuthType };
}

function checkToken(io: CommandIO, profile: ServerProfile): TokenFileReport {
  const report = checkAndFixTokenFile(profile.files(io.opts.stateDir).token);
  if (!report.exists) io.out.warn(`the server reported success but ${report.path} does not exist; the proof below will tell whether a restart keeps the login`);
  else if (!report.regular || !report.ownedByUser) throw new AgyError(EXIT.auth, 'token-file-unsafe', `${report.path} is not a regular file owned by you.`, { hint: `remove it and run \`agyctl login\` again` });
  else if (report.fixedFrom) io.out.warn(`${report.path} had mode ${report.fixedFrom}; narrowed it to 0600 (it is a credential)`);
  return report;
}

export async function runLogin(io: CommandIO, options: LoginOptions): Promise<LoginReport> {
  const pre = preflight(io, options.method);
  // A guessed profile may be corrected by initialize; its settings are then the ones to compare against.
  const onStarted = (init: InitializeResult): void => {
    const { profile, switched } = adoptDetectedProfile(io, init);
    if (!switched) return;
    io.out.event({ event: 'profile-detected', profile: profile.id, stateDir: io.opts.stateDir });
    pre.settingsRaw = snapshotSettings(io);
  };
  const signInOptions: SignInOptions = { method: pre.method, timeoutMs: options.timeoutMs, fakeDisplay: options.fakeDisplay, target: options.target, qr: options.qr, open: options.open, onStarted };
  const attempt = await signIn(io, signInOptions);
  const profile = profileOf(io.opts);
  io.out.event({ event: 'authenticated', method: pre.method });
  if (!io.out.json) io.out.info(io.out.e.green(`Signed in (${pre.method}). Checking that a fresh server accepts the credentials...`));
  const tokenFile = isBrowserMethod(profile, pre.method) ? checkToken(io, profile) : undefined;
  const settings = reconcileSettings(io, pre, profile);
  const proof = await proveCredentials(io, { keepProbeSession: options.keepProbeSession, timeoutMs: options.proofTimeoutMs });
  io.out.event({ event: 'verified', ...(tokenFile ? { tokenFile: { mode: tokenFile.mode } } : {}), sessionProbe: { removed: proof.probeRemoved, ...(options.keepProbeSession ? { sessionId: proof.sessionId } : {}) }, serverStartMs: proof.initMs });
  return {
    method: pre.method,
    url: attempt.url ? { port: attempt.url.kind === 'code-entry' ? null : attempt.url.auth.port, redirectUri: attempt.url.auth.redirectUri, source: attempt.url.source, mode: attempt.url.kind } : undefined,
    tokenFile,
    settings,
    proof,
  };
}
