/**
 * settings.json as `check` sees it: an adapter over the shared settings
 * module (src/settings: readSettings, problemsOf/validateSettings,
 * authTypeOf, neededEnv), mapping its problems onto check statuses. Only
 * this file knows that module's shapes.
 */

import fs from 'node:fs';
import { antigravity } from '../profiles/antigravity.js';
import { AUTH_TYPE_INFO, type AuthType, envIsSet, neededEnv } from '../settings/auth-types.js';
import { readSettings } from '../settings/read.js';
import { authTypeOf, gcpOf, type Problem, problemsOf } from '../settings/validate.js';
import { type Finding, fail, LOGIN_HINT, pass, warn } from './check-result.js';

/** "No auth type chosen" is not logged in; every other error makes the file wrong. */
const NOT_LOGGED_IN = new Set(['settings-missing', 'auth-type-missing']);
/** The env check (envFinding) owns these: this shell's variables are checked there. */
const ENV_PROBLEMS = new Set(['env-not-set', 'env-only-here', 'agent-platform-unconfigured']);

export interface SettingsVerdict {
  settings: Finding;
  /** Risky-but-working findings (mode, legacy names, secrets in the file), as one warning. */
  advice: Finding | undefined;
  authType: AuthType | undefined;
  oauth: boolean;
  data: Record<string, unknown> | undefined;
}

/**
 * `agyctl login` only where it can work: it refuses a state dir the server
 * cannot be pointed at (state-dir-not-steerable), so for one of those the fix
 * is the state dir itself.
 */
function loginHint(stateDir: string): string {
  if (antigravity.canSteer(stateDir)) return LOGIN_HINT;
  const missing = fs.existsSync(stateDir) ? '' : ' does not exist and';
  return `${stateDir}${missing} is not shaped <home>/${antigravity.stateDirShape}, so agyctl login cannot use it: check --state-dir (AGYCTL_STATE_DIR; the server's default is ~/${antigravity.stateDirShape}), then run agyctl login`;
}

function errorFinding(problem: Problem, stateDir: string): Finding {
  // A missing file gets the fix `settings show` gives for it; login writes auth.type as it signs in.
  if (problem.id === 'settings-missing' && antigravity.canSteer(stateDir))
    return fail('not-authenticated', problem.message, problem.hint);
  if (NOT_LOGGED_IN.has(problem.id)) return fail('not-authenticated', problem.message, loginHint(stateDir));
  return fail('misconfigured', problem.message, problem.hint);
}

export function judgeSettings(stateDir: string, env: NodeJS.ProcessEnv): SettingsVerdict {
  const file = readSettings(stateDir);
  const problems = problemsOf(file, env).filter((p) => !ENV_PROBLEMS.has(p.id));
  const errors = problems.filter((p) => p.severity === 'error');
  const warnings = problems.filter((p) => p.severity === 'warning');
  const authType = errors.length === 0 ? authTypeOf(file.data) : undefined;
  const first = errors.find((p) => NOT_LOGGED_IN.has(p.id)) ?? errors[0];
  const settings = first
    ? { ...errorFinding(first, stateDir), message: errors.map((p) => p.message).join('; ') }
    : pass(`auth type ${authType} (${file.path})`);
  const advice = warnings.length > 0 ? warn(warnings.map((p) => p.message).join('; '), warnings[0]!.hint) : undefined;
  return { settings, advice, authType, oauth: authType ? AUTH_TYPE_INFO[authType].oauth : false, data: file.data };
}

/** Key types: are the variables the server needs set in this environment (names only, never values)? */
export function envFinding(type: AuthType, data: Record<string, unknown> | undefined, env: NodeJS.ProcessEnv): Finding {
  const required = neededEnv(type)
    .filter((n) => n.need === 'required')
    .map((n) => n.name);
  const missing = required.filter((n) => !envIsSet(env, n));
  if (type === 'agent-platform' && !envIsSet(env, 'GOOGLE_API_KEY')) {
    const { project, location } = gcpOf(data);
    if (!(project || envIsSet(env, 'GOOGLE_CLOUD_PROJECT')) || !(location || envIsSet(env, 'GOOGLE_CLOUD_LOCATION')))
      missing.push(
        'GOOGLE_API_KEY (or a project and location: GOOGLE_CLOUD_PROJECT/GOOGLE_CLOUD_LOCATION or gcp.project/gcp.location)',
      );
  }
  if (missing.length === 0)
    return pass(
      `${type}: ${required.length > 0 ? `${required.join(', ')} set` : 'what it needs is set'} in this environment`,
    );
  return fail(
    'not-authenticated',
    `${type}: ${missing.join(', ')} not set in this environment`,
    'export it in the shell or service unit that runs the server and agyctl (see docs/settings.md)',
  );
}
