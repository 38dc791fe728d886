/**
 * agyctl login, end to end: preflight, sign in, check the token file,
 * reconcile settings.json, and prove the credentials in a fresh server.
 */
import fs from 'node:fs';
import type { InitializeResult } from '../acp/protocol.js';
import { activeAccount } from '../check/gemini-stores.js';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { adoptDetectedProfile } from '../profiles/adopt.js';
import { assertServerCanUse } from '../profiles/guard.js';
import { profileOf, type ServerProfile } from '../profiles/index.js';
import { resolveServerCommand } from '../profiles/server-start.js';
import { normalizeAuthType } from '../settings/auth-types.js';
import {
  authTypeKey,
  configuredMethod,
  rawAuthTypeFor,
  readProfileSettings,
  writeAuthType,
} from '../settings/profile-auth.js';
import { parseSettingsText, readSettings } from '../settings/read.js';
import { assertNotSymlink } from '../util/os/safe-fs.js';
import type { LoginEventOf, LoginOptions, ShowLoginEvent, SignedInAccount } from './events.js';
import { checkAndFixTokenFile, type ProofResult, proveCredentials, type TokenFileReport } from './prove-credentials.js';
import { isBrowserMethod, type SignInOptions, serverAccount, signIn } from './sign-in.js';
import type { Pastes } from './wait.js';

export type { LoginOptions } from './events.js';

export interface LoginReport {
  method: string;
  url:
    | { port: number | null; redirectUri: string; source: string; mode: 'loopback' | 'code-entry' | 'device' }
    | undefined;
  tokenFile: TokenFileReport | undefined;
  settings: { before: unknown; after: unknown; changedByServer: boolean; wroteAuthType: boolean };
  proof: ProofResult;
  /** Whom the sign-in signed in, when the server (or gemini-cli's own record) names it. */
  account: SignedInAccount | undefined;
}

interface Preflight {
  method: string;
  settingsRaw: string | undefined;
  /** settings name another method than --method: said once the server offers it. */
  mismatch: LoginEventOf<'method-mismatch'> | undefined;
  /** The server gives up on a sign-in sooner than --timeout says. */
  window: LoginEventOf<'sign-in-window'> | undefined;
}

/** The settings as they were before the server ran (re-read when the server turned out to be another profile). */
/** settings.json as login reads it; one it cannot read or parse is refused (exit 2) before anything else is said. */
export function usableSettings(io: CommandIO): ReturnType<typeof readProfileSettings> {
  const settings = readProfileSettings(profileOf(io.opts), io.opts.stateDir);
  if (settings.unreadable)
    throw usageError(
      `Cannot read ${settings.path}: ${settings.unreadable}.`,
      'fix the file, or move it aside and run `agyctl settings set-auth oauth-personal`',
    );
  if (settings.error)
    throw usageError(
      `${settings.path} line ${settings.error.line} column ${settings.error.column}: ${settings.error.message}.`,
      'fix the file (agyctl settings validate shows every problem), or run `agyctl settings set-auth TYPE --force` to move it aside',
    );
  return settings;
}

function preflight(io: CommandIO, requested: string | undefined): Preflight {
  const profile = profileOf(io.opts);
  const dir = io.opts.stateDir;
  assertServerCanUse(profile, dir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    throw usageError(
      `The state directory ${dir} is not writable by you.`,
      `fix its owner or mode, or pass --state-dir`,
    );
  }
  const settings = usableSettings(io);
  resolveServerCommand(io.opts.server, io.ctx.env, io.ctx.cwd, profile); // exit 4 now rather than after a shim dir exists
  refuseUnknownAuthType(profile, settings.path, settings.data);
  const configured = configuredMethod(profile, settings.data);
  const method = requested ?? configured ?? 'oauth-personal';
  // Said once the server offers the method (onStarted): a warning before "no such method" would mislead.
  const mismatch =
    requested && configured && configured !== requested
      ? {
          event: 'method-mismatch' as const,
          key: authTypeKey(profile),
          configured,
          requested,
          canSetAuth: canSetAuth(profile, requested),
        }
      : undefined;
  const window =
    profile.quirks.authWindowMs === undefined
      ? undefined
      : { event: 'sign-in-window' as const, title: profile.title, minutes: profile.quirks.authWindowMs / 60_000 };
  return { method, settingsRaw: settings.raw, mismatch, window };
}

/** `agyctl settings set-auth X` only where X is a type settings accepts (never `set-auth sso`). */
function canSetAuth(profile: ServerProfile, method: string): boolean {
  return profile.unsupported.settings === undefined && normalizeAuthType(method) !== undefined;
}

/** The server cannot start a sign-in for a type it does not know, and the proof would fail after it: refuse first, as `settings validate` does. */
function refuseUnknownAuthType(profile: ServerProfile, file: string, data: Record<string, unknown> | undefined): void {
  const raw = rawAuthTypeFor(profile, data);
  if (raw === undefined || configuredMethod(profile, data) !== undefined) return;
  const known = profile.authMethods;
  throw new AgyError(
    EXIT.usage,
    'settings-invalid',
    `${file}: ${authTypeKey(profile)} ${JSON.stringify(raw)} is not an auth type the server knows (known: ${known.join(', ')}); nothing was started.`,
    {
      hint:
        profile.unsupported.settings === undefined
          ? 'run `agyctl settings set-auth <type>` (`agyctl settings validate` lists every problem), then `agyctl login`'
          : `set ${authTypeKey(profile)} to one of ${known.join(', ')} in settings.json, then run agyctl login`,
    },
  );
}

/** The server may rewrite settings.json during a login (reported for some builds); and it needs auth.type to find the credentials after a restart. */
function reconcileSettings(
  io: CommandIO,
  pre: Preflight,
  profile: ServerProfile,
  show: ShowLoginEvent,
): LoginReport['settings'] {
  const key = authTypeKey(profile);
  const now = readProfileSettings(profile, io.opts.stateDir);
  const before =
    pre.settingsRaw === undefined
      ? undefined
      : rawAuthTypeFor(profile, parseSettingsText(pre.settingsRaw, { comments: profile.settingsComments }).data);
  const changedByServer = now.raw !== pre.settingsRaw;
  if (changedByServer)
    void show({
      event: 'settings-changed',
      by: 'server',
      authTypeBefore: before ?? null,
      authTypeAfter: rawAuthTypeFor(profile, now.data) ?? null,
      key,
      expected: Boolean(profile.quirks.writesAuthTypeOnLogin),
    });
  let wroteAuthType = false;
  const current = rawAuthTypeFor(profile, now.data);
  if (current === undefined && !now.error) {
    writeAuthType(profile, io.opts.stateDir, pre.method, io.ctx.env);
    wroteAuthType = true;
    void show({ event: 'settings-changed', by: 'agyctl', authTypeBefore: null, authTypeAfter: pre.method, key });
  } else if (current !== pre.method) {
    void show({
      event: 'auth-type-differs',
      key,
      current,
      method: pre.method,
      canSetAuth: canSetAuth(profile, pre.method),
    });
  }
  return {
    before: before ?? null,
    after: rawAuthTypeFor(profile, readProfileSettings(profile, io.opts.stateDir).data) ?? null,
    changedByServer,
    wroteAuthType,
  };
}

function checkToken(io: CommandIO, profile: ServerProfile, show: ShowLoginEvent): TokenFileReport {
  const report = checkAndFixTokenFile(profile.files(io.opts.stateDir).token);
  if (!report.exists) void show({ event: 'token-file-missing', path: report.path });
  else if (!report.regular || !report.ownedByUser)
    throw new AgyError(EXIT.auth, 'token-file-unsafe', `${report.path} is not a regular file owned by you.`, {
      hint: `remove it and run \`agyctl login\` again`,
    });
  else if (report.fixedFrom) void show({ event: 'token-file-narrowed', path: report.path, from: report.fixedFrom });
  return report;
}

/** Live beats static: a fresh server accepted the login although there is no token file, so the server keeps it elsewhere. */
function credentialsWhere(
  tokenFile: TokenFileReport | undefined,
  show: ShowLoginEvent,
): 'token-file' | 'elsewhere' | undefined {
  if (!tokenFile) return undefined;
  if (tokenFile.exists) return 'token-file';
  void show({ event: 'credentials-elsewhere', tokenFile: tokenFile.path });
  return 'elsewhere';
}

/** The login's events go to `show`, in order; pasted lines come from `pastes`; the report is what it found. */
export async function runLogin(
  io: CommandIO,
  options: LoginOptions,
  show: ShowLoginEvent,
  pastes: Pastes,
): Promise<LoginReport> {
  // The server would write the new token through a planted link (as root: anywhere): refuse before starting it.
  assertNotSymlink(profileOf(io.opts).files(io.opts.stateDir).token, 'the token file');
  const pre = preflight(io, options.method);
  if (pre.window) void show(pre.window);
  // A guessed profile may be corrected by initialize; its settings are then the ones to compare against.
  const onStarted = (init: InitializeResult): void => {
    if (pre.mismatch) void show(pre.mismatch);
    const { profile, switched, target } = adoptDetectedProfile(io, init);
    if (!switched) return;
    io = { ...io, opts: target }; // from here on the login works on the detected profile's target
    void show({ event: 'profile-detected', profile: profile.id, stateDir: io.opts.stateDir });
    pre.settingsRaw = readSettings(io.opts.stateDir).raw;
  };
  const signInOptions: SignInOptions = { ...options, method: pre.method, show, pastes, onStarted };
  const attempt = await signIn(io, signInOptions);
  const profile = profileOf(io.opts);
  await show({ event: 'authenticated', method: pre.method });
  const tokenFile = isBrowserMethod(profile, pre.method) ? checkToken(io, profile, show) : undefined;
  const settings = reconcileSettings(io, pre, profile, show);
  const proof = await proveCredentials(io, {
    keepProbeSession: options.keepProbeSession,
    timeoutMs: options.proofTimeoutMs,
  });
  const credentials = credentialsWhere(tokenFile, show);
  const account = attempt.account ? serverAccount(attempt.account) : localAccount(io, profile);
  await show({
    event: 'verified',
    ...(tokenFile ? { tokenFile: { mode: tokenFile.mode } } : {}),
    ...(credentials ? { credentials } : {}),
    sessionProbe: {
      removed: proof.probeRemoved,
      ...(options.keepProbeSession ? { sessionId: proof.sessionId } : {}),
    },
    serverStartMs: proof.initMs,
    ...(account ? { account } : {}),
  });
  await show({
    event: 'logged-in',
    method: pre.method,
    serverStartMs: proof.initMs,
    ...(account ? { account } : {}),
    ...(tokenFile?.exists ? { tokenFile: { path: tokenFile.path, mode: tokenFile.mode } } : {}),
    ...(options.keepProbeSession ? { keptProbeSession: proof.sessionId } : {}),
  });
  return {
    method: pre.method,
    url: attempt.url
      ? {
          port: attempt.url.kind === 'loopback' ? attempt.url.auth.port : null,
          redirectUri: attempt.url.auth.redirectUri,
          source: attempt.url.source,
          mode: attempt.url.kind,
        }
      : undefined,
    tokenFile,
    settings,
    proof,
    account,
  };
}

/** gemini-cli records the account it signed in (google_accounts.json): read locally, no network. */
function localAccount(io: CommandIO, profile: ServerProfile): SignedInAccount | undefined {
  if (!profile.quirks.localSignInRecords) return undefined;
  const email = activeAccount(io.opts.stateDir);
  return email ? { label: 'Google account', email, source: 'google_accounts.json' } : undefined;
}
