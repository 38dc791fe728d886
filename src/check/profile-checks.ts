/**
 * `check`'s static checks for gemini-cli: settings.json's
 * security.auth.selectedType, the OAuth credential in oauth_creds.json, the
 * variables key types need, the server command. No conversations check:
 * gemini-cli has no conversation store agyctl manages.
 */

import type { ServerProfile } from '../profiles/types.js';
import { envIsSet } from '../settings/auth-types.js';
import { authTypeKey, rawAuthTypeFor, readProfileSettings } from '../settings/profile-auth.js';
import { type Finding, fail, LOGIN_HINT, pass, timed } from './check-result.js';
import { accountFinding, encryptedStoreFinding, usesEncryptedStore } from './gemini-stores.js';
import { type StaticInput, type StaticOutcome, serverFinding, tokenChecks } from './static-checks.js';

/** What each key method needs in the server's environment (names only; values are never read out). */
const NEEDS: Readonly<Record<string, { all?: string[]; any?: string[][] }>> = {
  'gemini-api-key': { all: ['GEMINI_API_KEY'] },
  'vertex-ai': { any: [['GOOGLE_API_KEY'], ['GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION']] },
};

interface ProfileVerdict {
  finding: Finding;
  method: string | undefined;
}

function judge(profile: ServerProfile, stateDir: string, env: NodeJS.ProcessEnv): ProfileVerdict {
  const file = readProfileSettings(profile, stateDir);
  const key = authTypeKey(profile);
  if (file.unreadable)
    return {
      method: undefined,
      finding: fail('misconfigured', `${file.path} cannot be read: ${file.unreadable}`, `fix its permissions`),
    };
  if (file.error?.kind === 'syntax')
    return {
      method: undefined,
      finding: fail(
        'misconfigured',
        `${file.path} line ${file.error.line} column ${file.error.column}: ${file.error.message}`,
        'fix the file (comments are fine; trailing commas are not)',
      ),
    };
  const raw = rawAuthTypeFor(profile, file.data);
  if (raw === undefined) {
    // Without a selected type gemini-cli falls back to an API key from its environment.
    if (envIsSet(env, 'GEMINI_API_KEY'))
      return { method: 'gemini-api-key', finding: pass(`no ${key} in ${file.path}: the server uses GEMINI_API_KEY`) };
    return {
      method: undefined,
      finding: fail(
        'not-authenticated',
        `${key} is not set in ${file.path}: not logged in`,
        `${LOGIN_HINT} --profile gemini-cli`,
      ),
    };
  }
  if (
    typeof raw !== 'string' ||
    !profile.authMethods.concat(['compute-default-credentials', 'cloud-shell']).includes(raw)
  ) {
    return {
      method: undefined,
      finding: fail(
        'misconfigured',
        `${key} ${JSON.stringify(raw)} is not an auth type gemini-cli knows`,
        `set it to one of ${profile.authMethods.join(', ')} (or run: agyctl login --profile gemini-cli)`,
      ),
    };
  }
  return { method: raw, finding: pass(`auth type ${raw} (${file.path})`) };
}

function envFinding(method: string, env: NodeJS.ProcessEnv): Finding {
  const need = NEEDS[method];
  if (!need) return pass(`${method}: nothing to check in this environment`);
  const missingAll = (need.all ?? []).filter((n) => !envIsSet(env, n));
  const anyOk = !need.any || need.any.some((group) => group.every((n) => envIsSet(env, n)));
  if (missingAll.length === 0 && anyOk) return pass(`${method}: what it needs is set in this environment`);
  const missing = [...missingAll, ...(anyOk ? [] : [need.any!.map((g) => g.join(' + ')).join(' or ')])];
  return fail(
    'not-authenticated',
    `${method}: ${missing.join(', ')} not set in this environment`,
    'export it in the shell or service unit that runs the server and agyctl',
  );
}

export function runProfileStaticChecks(input: StaticInput & { profile: ServerProfile }): StaticOutcome {
  const { profile } = input;
  const out: StaticOutcome = { checks: [], token: undefined, metrics: {}, serverCommand: undefined };
  let verdict!: ProfileVerdict;
  out.checks.push(
    timed('settings', () => {
      verdict = judge(profile, input.stateDir, input.env);
      return verdict.finding;
    }),
  );
  const method = verdict.method;
  const records = profile.quirks.localSignInRecords === true;
  const encrypted = records && usesEncryptedStore(input.env);
  if (method && profile.browserMethods.includes(method) && encrypted)
    out.checks.push(timed('token-file', () => encryptedStoreFinding(input.stateDir)));
  else if (method && profile.browserMethods.includes(method))
    tokenChecks(profile.files(input.stateDir).token, input.now, out, input.live);
  else if (method) out.checks.push(timed('env', () => envFinding(method, input.env)));
  const account = records ? accountFinding(input.stateDir) : undefined;
  if (account) out.checks.push(timed('account', () => account));
  out.checks.push(timed('server-command', () => serverFinding(input, out)));
  return out;
}
