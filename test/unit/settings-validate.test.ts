import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AUTH_TYPES,
  authTypeOf,
  locationProblem,
  neededEnv,
  normalizeAuthType,
  type Problem,
  problemsOf,
  projectProblem,
  readSettings,
  type SettingsFile,
  validateSettings,
} from '../../src/settings/index.js';

const ids = (problems: Problem[]): string[] => problems.map((p) => `${p.severity}:${p.id}`);
const auth = (type: unknown, gcp?: Record<string, unknown>): Record<string, unknown> => ({
  auth: { type },
  ...(gcp ? { gcp } : {}),
});

describe('auth types', () => {
  it('lists the four types the server names, and maps vertex-ai to agent-platform', () => {
    expect(AUTH_TYPES).toEqual(['oauth-personal', 'gemini-api-key', 'oauth-business', 'agent-platform']);
    expect(normalizeAuthType('vertex-ai')).toEqual({ type: 'agent-platform', legacy: 'vertex-ai' });
    expect(normalizeAuthType('Vertex-AI')).toBeUndefined();
    expect(normalizeAuthType('toString')).toBeUndefined();
    expect(authTypeOf(auth('vertex-ai'))).toBe('agent-platform');
    expect(authTypeOf({ auth: 'oauth-personal' })).toBeUndefined();
  });

  it('says which environment variables each type needs', () => {
    expect(neededEnv('gemini-api-key').map((n) => [n.name, n.need, n.secret])).toEqual([
      ['GEMINI_API_KEY', 'required', true],
    ]);
    expect(neededEnv('oauth-personal')).toEqual([]);
    expect(neededEnv('agent-platform').map((n) => n.name)).toContain('GOOGLE_API_KEY');
  });
});

describe('region-like locations', () => {
  it.each(['us-central1', 'europe-west4', 'global', 'us', 'eu', 'northamerica-northeast1', 'me-central2'])(
    'accepts %s',
    (v) => {
      expect(locationProblem(v)).toBeUndefined();
    },
  );

  it.each(['Mars', 'US-CENTRAL1', 'us central1', 'us-central', '', 'us-central1/'])('rejects %j', (v) => {
    expect(locationProblem(v)).toMatch(/not a region/);
  });

  it('names the region when given a zone', () => {
    expect(locationProblem('us-central1-a')).toContain('use us-central1');
  });

  it('accepts project ids, numbers and domain-scoped ids, not spaces or slashes', () => {
    for (const ok of ['my-project-123', '123456789012', 'example.com:proj']) expect(projectProblem(ok)).toBeUndefined();
    for (const bad of ['a b', 'a/b', '-x', '']) expect(projectProblem(bad)).toBeDefined();
  });
});

describe('validateSettings', () => {
  it('is clean for oauth-personal', () => {
    expect(validateSettings(auth('oauth-personal'), {})).toEqual([]);
  });

  it('warns (never errors) when GEMINI_API_KEY is not visible here, since the server has its own environment', () => {
    const problems = validateSettings(auth('gemini-api-key'), {});
    expect(ids(problems)).toEqual(['warning:env-not-set']);
    expect(problems[0]!.hint).toContain('Environment=GEMINI_API_KEY=');
    expect(problems[0]!.hint).toContain('EnvironmentFile=');
    expect(validateSettings(auth('gemini-api-key'), { GEMINI_API_KEY: 'k' })).toEqual([]);
    expect(ids(validateSettings(auth('gemini-api-key'), { GEMINI_API_KEY: '' }))).toEqual(['warning:env-not-set']);
  });

  it('requires gcp.project and gcp.location in the file for oauth-business', () => {
    expect(
      ids(validateSettings(auth('oauth-business'), { GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us' })),
    ).toEqual(['error:gcp-missing']);
    expect(validateSettings(auth('oauth-business', { project: 'p', location: 'us-central1' }), {})).toEqual([]);
    expect(validateSettings(auth('oauth-business', { project: 'p' }), {})[0]!.message).toContain(
      'missing: gcp.location',
    );
  });

  it('accepts agent-platform with a project and location, and flags what depends on this shell', () => {
    expect(validateSettings(auth('agent-platform', { project: 'p', location: 'europe-west4' }), {})).toEqual([]);
    expect(ids(validateSettings(auth('agent-platform'), {}))).toEqual(['warning:agent-platform-unconfigured']);
    expect(ids(validateSettings(auth('agent-platform'), { GOOGLE_API_KEY: 'k' }))).toEqual(['warning:env-only-here']);
    expect(ids(validateSettings(auth('agent-platform', { project: 'p' }), { GOOGLE_CLOUD_LOCATION: 'us' }))).toEqual([
      'warning:env-only-here',
    ]);
  });

  it('flags a missing, unknown and legacy auth.type', () => {
    expect(ids(validateSettings({}, {}))).toEqual(['error:auth-type-missing']);
    expect(ids(validateSettings(auth('api-key'), {}))).toEqual(['error:auth-type-unknown']);
    expect(ids(validateSettings(auth(42), {}))).toEqual(['error:auth-type-unknown']);
    expect(ids(validateSettings(auth('vertex-ai', { project: 'p', location: 'us-central1' }), {}))).toEqual([
      'warning:auth-type-legacy',
    ]);
  });

  it('a finding about a vertex-ai file says it is the old name of agent-platform', () => {
    const unconfigured = validateSettings(auth('vertex-ai'), {}).find((p) => p.id === 'agent-platform-unconfigured');
    expect(unconfigured?.message).toMatch(/^vertex-ai \(the old name of agent-platform\) needs GOOGLE_API_KEY/);
    const envOnly = validateSettings(auth('vertex-ai'), { GOOGLE_API_KEY: 'k' }).find((p) => p.id === 'env-only-here');
    expect(envOnly?.message).toMatch(/^vertex-ai \(the old name of agent-platform\) relies on GOOGLE_API_KEY/);
  });

  it('checks gcp values: wrong types are errors, odd shapes warnings', () => {
    expect(ids(validateSettings(auth('oauth-personal', { project: 7 }), {}))).toEqual(['error:gcp-project-invalid']);
    expect(ids(validateSettings(auth('oauth-business', { project: 'p', location: 'us-central1-b' }), {}))).toEqual([
      'warning:gcp-location-invalid',
    ]);
  });

  it('warns about credential-like values without ever showing them', () => {
    const problems = validateSettings(
      { ...auth('gemini-api-key'), GEMINI_API_KEY: 'AIzaSECRET', nested: { token: 'tok-SECRET' } },
      { GEMINI_API_KEY: 'x' },
    );
    expect(ids(problems)).toEqual(['warning:secret-in-file', 'warning:secret-in-file']);
    expect(JSON.stringify(problems)).not.toContain('SECRET');
    expect(problems.map((p) => p.message).join()).toContain('nested.token');
  });
});

describe('problemsOf (the whole file)', () => {
  const base: SettingsFile = { path: '/s/settings.json', target: '/s/settings.json', symlink: false, exists: true };

  it('reports a missing file as an error naming set-auth', () => {
    const [p] = problemsOf({ ...base, exists: false }, {});
    expect(p).toMatchObject({ id: 'settings-missing', severity: 'error' });
    expect(p!.hint).toContain('agyctl settings set-auth');
  });

  it('reports a syntax error with its line and column, and a shape error', () => {
    const syntax = problemsOf({ ...base, raw: '{', error: { kind: 'syntax', message: 'x', line: 3, column: 5 } }, {});
    expect(syntax[0]).toMatchObject({ id: 'json-invalid', line: 3, column: 5 });
    expect(syntax[0]!.message).toContain('line 3, column 5');
    const shape = problemsOf(
      { ...base, data: { auth: 1 }, error: { kind: 'shape', message: 'y', line: 1, column: 9 } },
      {},
    );
    expect(ids(shape)).toEqual(['error:shape-invalid']);
  });

  it('reads a file with comments and only warns: whether the server skips comments is a guess (assumptions.md)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-comments-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'settings.json'),
        '{\n  // personal account\n  "auth": {"type": "oauth-personal"}\n}\n',
      );
      const file = readSettings(dir);
      expect(file).toMatchObject({ comments: true, data: auth('oauth-personal') });
      expect(file.error).toBeUndefined();
      expect(ids(problemsOf(file, {}, process.getuid?.()))).toEqual(['warning:json-comments']);
      fs.writeFileSync(path.join(dir, 'settings.json'), '{\n  // and broken\n  "auth": \n}\n');
      expect(ids(problemsOf(readSettings(dir), {}))).toContain('error:json-invalid');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('warns when others can write the file, and when it belongs to someone else', () => {
    const file = { ...base, data: auth('oauth-personal'), mode: 0o666, uid: 1234 };
    expect(ids(problemsOf(file, {}, 1000))).toEqual(['warning:mode-writable-by-others', 'warning:owner-other']);
    expect(problemsOf({ ...file, mode: 0o644, uid: 1000 }, {}, 1000)).toEqual([]);
  });
});
