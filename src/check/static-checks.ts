/**
 * The checks that need no server: settings, the credential on disk, the
 * conversations directory, and whether the server command resolves.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ServerCommand } from '../acp/resolve.js';
import { AgyError, EXIT } from '../core/errors.js';
import { describeUnrecognised, stateFiles, unrecognisedEntries } from '../core/paths.js';
import { resolveServerCommand } from '../profiles/server-start.js';
import type { ServerProfile } from '../profiles/types.js';
import { type Finding, fail, LOGIN_HINT, pass, timed, toResult, warn } from './check-result.js';
import { envFinding, judgeSettings, type SettingsVerdict } from './settings-view.js';
import { describeInsight, inspectToken } from './token.js';
import type { CheckResult, Metrics, TokenInsight } from './types.js';

export interface StaticInput {
  stateDir: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** --server / AGYCTL_SERVER, if any. */
  server: string | undefined;
  now: number;
  /** The server profile (absent: antigravity); gemini-cli's own checks are in profile-checks.ts. */
  profile?: ServerProfile;
  /** The live check runs too: a fix never tells the user to run `agyctl check --live`, the command just run. */
  live?: boolean;
}

export interface StaticOutcome {
  checks: CheckResult[];
  token: TokenInsight | undefined;
  metrics: Metrics;
  serverCommand: ServerCommand | undefined;
}

/** The note when the live check overrules a missing or unusable token file. */
export const ELSEWHERE =
  'the server holds credentials elsewhere, e.g. the OS keyring (session/new without authenticate gave a session)';

/** Without --live nobody knows whether the server keeps its credentials elsewhere; say so, and who decides. */
export const LIVE_DECIDES =
  'unless this server build keeps its credentials elsewhere (e.g. the OS keyring); `agyctl check --live` decides';
/** The same, when the live check is running: its own line below decides. */
const LIVE_RUNNING =
  'unless this server build keeps its credentials elsewhere (e.g. the OS keyring); the live check decides';

function liveNoteFor(file: string, inspection: ReturnType<typeof inspectToken>): string | undefined {
  if (inspection.state === 'missing') return `no ${path.basename(file)} (${file}); ${ELSEWHERE}`;
  return inspection.findings.every((f) => f.whereNot)
    ? `${inspection.findings.map((f) => f.message).join('; ')}; ${ELSEWHERE}`
    : undefined;
}

export function tokenChecks(file: string, now: number, out: StaticOutcome, live = false): void {
  const liveDecides = live ? LIVE_RUNNING : LIVE_DECIDES;
  let inspection!: ReturnType<typeof inspectToken>;
  const result = timed('token-file', () => {
    inspection = inspectToken(file, now);
    if (inspection.state === 'missing')
      return fail(
        'not-authenticated',
        `no token file (${file}): not logged in, ${liveDecides}`,
        live ? LOGIN_HINT : `${LOGIN_HINT} (or: agyctl check --live)`,
      );
    const worst = inspection.findings.find((f) => f.failure !== 'misconfigured') ?? inspection.findings[0];
    if (!worst)
      return pass(
        `${file}: regular file, yours, mode 0600${inspection.insight.fields === 'not-json' ? '' : ', parses as JSON'}`,
      );
    const message = inspection.findings.map((f) => f.message).join('; ');
    const whereNot = inspection.findings.every((f) => f.whereNot);
    return {
      ...fail(worst.failure, whereNot ? `${message}, ${liveDecides}` : message),
      hint: inspection.findings.map((f) => f.hint).join('; '),
    };
  });
  // Only "the credentials are not in this file" findings; a wrong mode or owner stays a finding whatever the server says.
  if (!result.ok) result.liveNote = liveNoteFor(file, inspection);
  out.checks.push(result);
  if (inspection.state !== 'present') return;
  out.token = inspection.insight;
  out.metrics.tokenModeOk = inspection.insight.modeOk;
  out.metrics.tokenAgeS = inspection.insight.ageS;
  if (inspection.writtenMs !== undefined) out.metrics.tokenWrittenS = Math.round(inspection.writtenMs / 1000);
  out.metrics.tokenFieldsKnown = inspection.insight.fields === 'known';
  if (inspection.insight.refreshToken !== null) out.metrics.tokenRefresh = inspection.insight.refreshToken;
  if (inspection.insight.expiresInS !== null)
    out.metrics.tokenExpiryS = Math.round(now / 1000) + inspection.insight.expiresInS;
  const insight = inspection.insight;
  const d = describeInsight(insight);
  const token = timed('token', () => {
    if (d.dead) return fail('reauth-required', `${d.text}: ${d.warning}`, `${LOGIN_HINT} (sign in again)`);
    return d.warning
      ? warn(
          `${d.text}: ${d.warning}`,
          live ? undefined : 'run: agyctl check --live to see whether the server accepts it',
        )
      : pass(d.text, { severity: 'warning' });
  });
  // A server that still gets a session keeps a working credential elsewhere: live decides, as for a missing file.
  if (d.dead) token.liveNote = `${d.text} in ${path.basename(file)}; ${ELSEWHERE}`;
  out.checks.push(token);
}

function conversationsFinding(dir: string): Finding {
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return pass(`${dir} does not exist yet (the server creates it)`);
    return fail(
      'misconfigured',
      `${dir} cannot be examined (${(err as NodeJS.ErrnoException).code})`,
      `check the permissions of ${dir}'s parents`,
    );
  }
  if (!st.isDirectory())
    return fail(
      'misconfigured',
      `${dir} is not a directory`,
      `move it aside; the server keeps its conversations there`,
    );
  try {
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.X_OK);
  } catch {
    return fail('misconfigured', `${dir} is not readable by you`, `run: chmod u+rwx ${dir}`);
  }
  const unrecognised = unrecognisedEntries(dir);
  if (unrecognised.length > 0) return warn(describeUnrecognised(unrecognised));
  return pass(`${dir} is readable`);
}

export function serverFinding(input: StaticInput, out: StaticOutcome): Finding {
  try {
    out.serverCommand = resolveServerCommand(input.server, input.env, input.cwd, input.profile);
    return pass(`server command: ${out.serverCommand.display}`);
  } catch (err) {
    if (err instanceof AgyError && err.exit === EXIT.server) return fail('server-error', err.message, err.hint);
    throw err; // bad --server syntax is a usage error (exit 2)
  }
}

export function runStaticChecks(input: StaticInput): StaticOutcome {
  const files = stateFiles(input.stateDir);
  const out: StaticOutcome = { checks: [], token: undefined, metrics: {}, serverCommand: undefined };
  let verdict!: SettingsVerdict;
  out.checks.push(
    timed('settings', () => {
      verdict = judgeSettings(input.stateDir, input.env);
      return verdict.settings;
    }),
  );
  if (verdict.advice) out.checks.push(toResult('settings-advice', verdict.advice, 0));
  const type = verdict.authType;
  if (type && verdict.oauth) tokenChecks(files.token, input.now, out, input.live);
  else if (type) out.checks.push(timed('env', () => envFinding(type, verdict.data, input.env)));
  out.checks.push(timed('conversations', () => conversationsFinding(files.conversations)));
  out.checks.push(timed('server-command', () => serverFinding(input, out)));
  return out;
}
