/**
 * What settings.json means for the server, as a list of problems. Errors
 * make the file unusable as is; warnings depend on things agyctl cannot see
 * (the server's environment) or are risky but work. Messages never contain
 * a secret value.
 */
import { AUTH_TYPE_LIST, type AuthType, authTypeLabel, envIsSet, neededEnv, normalizeAuthType } from './auth-types.js';
import { removeBomCommand, type SettingsFile } from './read.js';

export interface Problem {
  /** Stable kebab-case id for scripts (documented in docs/settings.md). */
  id: string;
  severity: 'error' | 'warning';
  message: string;
  hint: string;
  line?: number;
  column?: number;
}

type Data = Record<string, unknown>;

const obj = (v: unknown): Data | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Data) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** auth.type exactly as written (may be anything, or missing). */
export function rawAuthType(data: Data | undefined): unknown {
  return obj(obj(data)?.auth)?.type;
}

/** The auth type the server will use, legacy names mapped to current ones; undefined when missing or unknown. */
export function authTypeOf(data: Data | undefined): AuthType | undefined {
  return normalizeAuthType(rawAuthType(data))?.type;
}

export function gcpOf(data: Data | undefined): { project: string | undefined; location: string | undefined } {
  const gcp = obj(obj(data)?.gcp);
  return { project: str(gcp?.project), location: str(gcp?.location) };
}

/** Why a location is not a region name (us-central1, europe-west4, global, us, eu), or undefined when it is. */
export function locationProblem(value: string): string | undefined {
  if (/^(global|us|eu|[a-z]+-[a-z]+[0-9]+)$/.test(value)) return undefined;
  const zone = /^([a-z]+-[a-z]+[0-9]+)-[a-z]$/.exec(value);
  if (zone) return `${JSON.stringify(value)} is a zone, not a region: use ${zone[1]}`;
  return `${JSON.stringify(value)} is not a region name like us-central1, europe-west4 or global`;
}

/** Why a project id is unusable, or undefined. Loose on purpose: ids, numbers and domain-scoped ids all occur. */
export function projectProblem(value: string): string | undefined {
  if (/^[A-Za-z0-9][A-Za-z0-9.:_-]{0,99}$/.test(value)) return undefined;
  return `${JSON.stringify(value)} is not a Google Cloud project id like my-project-123`;
}

const SET_AUTH_HINT = `run \`agyctl settings set-auth TYPE\` with TYPE one of ${AUTH_TYPE_LIST}`;
/** No settings.json: `check` and `settings show` give this one fix (login writes auth.type as it signs in). */
export const MISSING_SETTINGS_HINT = `run: agyctl login (or, to choose the auth type yourself: agyctl settings set-auth TYPE, TYPE one of ${AUTH_TYPE_LIST})`;

export function validateSettings(data: Data, env: NodeJS.ProcessEnv): Problem[] {
  const problems: Problem[] = [];
  const raw = rawAuthType(data);
  const norm = normalizeAuthType(raw);
  if (raw === undefined) {
    problems.push({
      id: 'auth-type-missing',
      severity: 'error',
      message: 'auth.type is not set: the server answers "Authentication required"',
      hint: SET_AUTH_HINT,
    });
  } else if (!norm) {
    problems.push({
      id: 'auth-type-unknown',
      severity: 'error',
      message: `auth.type ${JSON.stringify(raw)} is not an auth type the server knows`,
      hint: SET_AUTH_HINT,
    });
  } else if (norm.legacy) {
    problems.push({
      id: 'auth-type-legacy',
      severity: 'warning',
      message: `auth.type "${norm.legacy}" is the old name of ${norm.type}; the server still accepts it`,
      hint: `run \`agyctl settings set-auth ${norm.type}\` to write the current name`,
    });
  }
  problems.push(...gcpProblems(data, norm?.type, env, norm?.legacy));
  if (norm) problems.push(...envProblems(norm.type, data, env, norm.legacy));
  problems.push(...secretProblems(data));
  return problems;
}

function gcpProblems(data: Data, type: AuthType | undefined, env: NodeJS.ProcessEnv, legacy?: string): Problem[] {
  const problems: Problem[] = [];
  const gcp = obj(data.gcp) ?? {};
  for (const [key, check] of [
    ['project', projectProblem],
    ['location', locationProblem],
  ] as const) {
    const v = gcp[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') {
      problems.push({
        id: `gcp-${key}-invalid`,
        severity: 'error',
        message: `gcp.${key} must be a non-empty string`,
        hint: `run \`agyctl settings set-auth TYPE --${key} VALUE\``,
      });
      continue;
    }
    const why = check(v);
    if (why)
      problems.push({
        id: `gcp-${key}-invalid`,
        severity: 'warning',
        message: `gcp.${key}: ${why}`,
        hint: `run \`agyctl settings set-auth ${type ?? 'TYPE'} --${key} VALUE\``,
      });
  }
  const { project, location } = gcpOf(data);
  if (type === 'oauth-business' && (!project || !location)) {
    problems.push({
      id: 'gcp-missing',
      severity: 'error',
      message: `oauth-business needs gcp.project and gcp.location in settings.json (missing: ${missing(project, location)})`,
      hint: 'run `agyctl settings set-auth oauth-business --project ID --location REGION`',
    });
  }
  if (type === 'agent-platform' && (!project || !location) && !envIsSet(env, 'GOOGLE_API_KEY')) {
    const fromEnv =
      (!project ? envIsSet(env, 'GOOGLE_CLOUD_PROJECT') : true) &&
      (!location ? envIsSet(env, 'GOOGLE_CLOUD_LOCATION') : true);
    if (!fromEnv) {
      problems.push({
        id: 'agent-platform-unconfigured',
        severity: 'warning',
        message: `${authTypeLabel(type, legacy)} needs GOOGLE_API_KEY in the server's environment, or a project and location (missing: ${missing(project, location)}); none is visible here`,
        hint: 'run `agyctl settings set-auth agent-platform --project ID --location REGION`, or set GOOGLE_API_KEY where the server is started',
      });
    }
  }
  return problems;
}

const missing = (project: string | undefined, location: string | undefined): string =>
  [project ? '' : 'gcp.project', location ? '' : 'gcp.location'].filter(Boolean).join(', ');

/** agyctl cannot see the server's environment: a variable missing here is a warning, not an error. */
function envProblems(type: AuthType, data: Data, env: NodeJS.ProcessEnv, legacy?: string): Problem[] {
  const problems: Problem[] = [];
  for (const need of neededEnv(type)) {
    if (need.need === 'required' && !envIsSet(env, need.name)) {
      problems.push({
        id: 'env-not-set',
        severity: 'warning',
        message: `${authTypeLabel(type, legacy)} needs ${need.name} in the server's environment; it is not set in this shell`,
        hint: whereToSetEnv(need.name),
      });
    }
  }
  if (type === 'agent-platform') {
    const { project, location } = gcpOf(data);
    const viaEnv = [
      'GOOGLE_API_KEY',
      ...(project ? [] : ['GOOGLE_CLOUD_PROJECT']),
      ...(location ? [] : ['GOOGLE_CLOUD_LOCATION']),
    ].filter((n) => envIsSet(env, n));
    if ((!project || !location) && viaEnv.length > 0) {
      problems.push({
        id: 'env-only-here',
        severity: 'warning',
        message: `${authTypeLabel(type, legacy)} relies on ${viaEnv.join(', ')}, set in this shell; the server needs it in its own environment too`,
        hint: whereToSetEnv(viaEnv[0]!),
      });
    }
  }
  return problems;
}

/** The one sentence that says where a server-side variable goes. */
export function whereToSetEnv(name: string): string {
  return `set ${name} where the server is started: export it in that shell, or in its systemd unit (Environment=${name}=... or EnvironmentFile= pointing at a 0600 file); restart the server afterwards`;
}

const SECRET_KEY = /api[_-]?key|secret|password|token/i;

/** Keys that look like credentials, at any depth; values are never reported. */
function secretProblems(data: Data): Problem[] {
  const found: string[] = [];
  const walk = (v: unknown, at: string): void => {
    const o = obj(v);
    if (!o) return;
    for (const [k, child] of Object.entries(o)) {
      const here = at ? `${at}.${k}` : k;
      if (SECRET_KEY.test(k) && str(child)) found.push(here);
      else walk(child, here);
    }
  };
  walk(data, '');
  return found.map((key) => ({
    id: 'secret-in-file',
    severity: 'warning' as const,
    message: `settings.json holds a credential-like value at ${key} (not shown)`,
    hint: 'remove it from settings.json and give the server the key through its environment (see docs/settings.md)',
  }));
}

/** Every problem with the file: existence, readability, syntax, shape, permissions, then the content. */
export function problemsOf(file: SettingsFile, env: NodeJS.ProcessEnv, uid = process.getuid?.() ?? -1): Problem[] {
  if (file.unreadable)
    return [
      {
        id: 'settings-unreadable',
        severity: 'error',
        message: `cannot read ${file.path}: ${file.unreadable}`,
        hint: file.unreadableFix ?? 'run as the user the server runs as, or fix its permissions',
      },
    ];
  if (!file.exists)
    return [
      {
        id: 'settings-missing',
        severity: 'error',
        message: `${file.path} does not exist: the server answers "Authentication required"`,
        hint: MISSING_SETTINGS_HINT,
      },
    ];
  const problems: Problem[] = [];
  if (file.error) {
    const where = `line ${file.error.line}, column ${file.error.column}`;
    problems.push({
      id: file.error.kind === 'syntax' ? 'json-invalid' : 'shape-invalid',
      severity: 'error',
      message: `${file.path}: ${file.error.message} (${where})`,
      hint: file.error.bom
        ? `remove the byte-order mark: ${removeBomCommand(file.path)}`
        : `fix it by hand, or run \`agyctl settings set-auth TYPE --force\` to move it aside and write a fresh file`,
      line: file.error.line,
      column: file.error.column,
    });
  }
  if (file.comments)
    problems.push({
      id: 'json-comments',
      severity: 'warning',
      message: `${file.path} has comments: plain JSON has none, and whether the server's parser skips them is not known`,
      hint: 'if the server refuses the file (check --live fails at start-up), remove the comments',
    });
  problems.push(...permissionProblems(file, uid));
  if (file.data && file.error?.kind !== 'shape') problems.push(...validateSettings(file.data, env));
  return problems;
}

function permissionProblems(file: SettingsFile, uid: number): Problem[] {
  const problems: Problem[] = [];
  if (file.mode !== undefined && (file.mode & 0o022) !== 0) {
    problems.push({
      id: 'mode-writable-by-others',
      severity: 'warning',
      message: `settings.json is writable by group or others (mode ${modeString(file.mode)}): they can change how the server authenticates`,
      hint: `run \`chmod 644 ${file.target}\``,
    });
  }
  if (file.uid !== undefined && uid > 0 && file.uid !== uid) {
    problems.push({
      id: 'owner-other',
      severity: 'warning',
      message: `settings.json belongs to uid ${file.uid}, not to you (uid ${uid}): agyctl cannot rewrite it`,
      hint: 'run agyctl as the user the server runs as',
    });
  }
  return problems;
}

export const modeString = (mode: number): string => `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;

export const hasErrors = (problems: readonly Problem[]): boolean => problems.some((p) => p.severity === 'error');

/** The variables a type needs, and whether each is set in `env` (never its value). */
export function envReport(
  type: AuthType | undefined,
  env: NodeJS.ProcessEnv,
): Array<{ name: string; need: string; secret: boolean; set: boolean; why: string }> {
  if (!type) return [];
  return neededEnv(type).map((n) => ({
    name: n.name,
    need: n.need,
    secret: n.secret,
    set: envIsSet(env, n.name),
    why: n.why,
  }));
}
