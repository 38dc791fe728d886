import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyAuthError } from '../../src/acp/protocol.js';
import { AgyError } from '../../src/core/errors.js';
import { resolveStateDir } from '../../src/core/paths.js';
import { parseCode, Secrets } from '../../src/login/code-entry.js';
import { validateAuthUrl, validateCodeEntryUrl } from '../../src/profiles/auth-url.js';
import { defaultStateDirFor, PROFILE_IDS, PROGRAM_PROFILES, resolveProfile } from '../../src/profiles/choose.js';
import { removeProbeProjects } from '../../src/profiles/cleanup.js';
import { geminiCliHomeFor, geminiCliStateDir } from '../../src/profiles/gemini-cli-paths.js';
import { detectProfile, getProfile } from '../../src/profiles/index.js';
import { quietServerEnv, resolveServerCommand, signInGuard } from '../../src/profiles/server-start.js';
import { AUTH_TYPES } from '../../src/settings/auth-types.js';
import {
  configuredMethod,
  rawAuthTypeFor,
  readProfileSettings,
  writeAuthType,
} from '../../src/settings/profile-auth.js';

const gemini = getProfile('gemini-cli');
const tmp: string[] = [];
const tempDir = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-profiles-'));
  tmp.push(d);
  return d;
};
afterEach(() => {
  for (const d of tmp.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const CODE_ENTRY_URL =
  'https://accounts.google.com/o/oauth2/v2/auth?redirect_uri=https%3A%2F%2Fcodeassist.google.com%2Fauthcode&access_type=offline&scope=x&code_challenge_method=S256&code_challenge=abc&state=s1&response_type=code&client_id=c';
const LOOPBACK_URL =
  'https://accounts.google.com/o/oauth2/v2/auth?redirect_uri=http%3A%2F%2F127.0.0.1%3A45669%2Foauth2callback&access_type=offline&scope=x&state=s2&response_type=code&client_id=c';

describe('choosing a profile', () => {
  it('--profile beats AGYCTL_PROFILE beats the server command beats the default', () => {
    expect(resolveProfile('gemini-cli', { AGYCTL_PROFILE: 'antigravity' }, 'agy_acp_server')).toEqual({
      id: 'gemini-cli',
      source: 'flag',
    });
    expect(resolveProfile(undefined, { AGYCTL_PROFILE: 'gemini-cli' }, 'agy_acp_server')).toEqual({
      id: 'gemini-cli',
      source: 'env',
    });
    expect(resolveProfile(undefined, {}, '/opt/node/bin/gemini --acp')).toEqual({
      id: 'gemini-cli',
      source: 'server-command',
    });
    expect(resolveProfile(undefined, {}, '"/x y/gemini" --acp')).toEqual({
      id: 'gemini-cli',
      source: 'server-command',
    });
    expect(resolveProfile(undefined, {}, 'node scripts/agy-acp-sim')).toEqual({ id: 'antigravity', source: 'default' });
    expect(resolveProfile(undefined, {}, undefined)).toEqual({ id: 'antigravity', source: 'default' });
  });

  it('an unknown profile is a usage error naming the choices', () => {
    expect(() => resolveProfile('claude', {}, undefined)).toThrow(AgyError);
    try {
      resolveProfile(undefined, { AGYCTL_PROFILE: 'nope' }, undefined);
    } catch (err) {
      expect((err as AgyError).exit).toBe(2);
      expect((err as AgyError).message).toContain('antigravity, gemini-cli');
    }
  });

  it("the guess knows exactly each profile's default programs and state dir", () => {
    const fromProfiles = Object.fromEntries(
      PROFILE_IDS.flatMap((id) => getProfile(id).defaultCommands.map((c) => [c.name, id])),
    );
    expect(PROGRAM_PROFILES).toEqual(fromProfiles);
    for (const id of PROFILE_IDS)
      expect(defaultStateDirFor(id)({ HOME: os.tmpdir() })).toBe(getProfile(id).defaultStateDir({ HOME: os.tmpdir() }));
  });

  it('what differs between servers is on the profile, not in id comparisons outside src/profiles', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (p !== path.join('src', 'profiles')) walk(p);
        } else if (/profile\.id\s*[!=]==/.test(fs.readFileSync(p, 'utf8'))) offenders.push(p);
      }
    };
    walk('src');
    expect(offenders).toEqual([]);
    for (const id of PROFILE_IDS) {
      const p = getProfile(id);
      expect(p.browserMethods).toContain(p.defaultSignInMethod);
      const steered = p.serverEnv({}, path.join('/srv/box', p.stateDirShape));
      expect(steered[p.homeVariable], id).toBe('/srv/box');
    }
  });

  it("antigravity's auth methods are settings' auth types, in the same order", () => {
    expect(getProfile('antigravity').authMethods).toEqual([...AUTH_TYPES]);
  });

  it('initialize agentInfo.name identifies the server', () => {
    expect(detectProfile('gemini-cli')).toBe('gemini-cli');
    expect(detectProfile('antigravity-acp')).toBe('antigravity');
    expect(detectProfile('something-else')).toBeUndefined();
    expect(detectProfile(undefined)).toBeUndefined();
  });
});

describe('gemini-cli paths and environment', () => {
  it('state dir is <GEMINI_CLI_HOME or HOME>/.gemini, and is steered through GEMINI_CLI_HOME', () => {
    const home = os.tmpdir(); // HOME must exist
    expect(geminiCliStateDir({ HOME: home })).toBe(`${home}/.gemini`);
    expect(geminiCliStateDir({ HOME: '/home/u', GEMINI_CLI_HOME: '/srv/g' })).toBe('/srv/g/.gemini');
    expect(resolveStateDir(undefined, { HOME: home }, '/', gemini.defaultStateDir)).toBe(`${home}/.gemini`);
    expect(geminiCliHomeFor('/srv/g/.gemini')).toBe('/srv/g');
    expect(geminiCliHomeFor('/srv/g/state')).toBeUndefined();
    expect(gemini.serverEnv({ HOME: '/home/u', PATH: '/bin' }, '/srv/g/.gemini')).toEqual({
      HOME: '/home/u',
      PATH: '/bin',
      GEMINI_CLI_HOME: '/srv/g',
    });
    expect(gemini.files('/srv/g/.gemini')).toEqual({
      settings: '/srv/g/.gemini/settings.json',
      token: '/srv/g/.gemini/oauth_creds.json',
      conversations: undefined,
    });
  });

  it('without --server, `gemini --acp` is looked up on PATH', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'gemini'), '#!/bin/sh\n', { mode: 0o755 });
    const cmd = resolveServerCommand(undefined, { PATH: dir }, '/', gemini);
    expect(cmd).toMatchObject({ file: path.join(dir, 'gemini'), args: ['--acp'] });
    expect(() => resolveServerCommand(undefined, { PATH: '/nonexistent' }, '/', gemini)).toThrow(/gemini/);
  });

  it('outside login the server never gets to open a browser', () => {
    expect(quietServerEnv(gemini, { DISPLAY: ':0' })).toEqual({ DISPLAY: ':0', NO_BROWSER: 'true' });
    expect(quietServerEnv(getProfile('antigravity'), { DISPLAY: ':0' })).toEqual({ DISPLAY: ':0' });
  });
});

describe('the auth type in gemini-cli settings', () => {
  it('reads security.auth.selectedType, and only known methods count as configured', () => {
    expect(rawAuthTypeFor(gemini, { security: { auth: { selectedType: 'oauth-personal' } } })).toBe('oauth-personal');
    expect(configuredMethod(gemini, { security: { auth: { selectedType: 'vertex-ai' } } })).toBe('vertex-ai');
    expect(configuredMethod(gemini, { security: { auth: { selectedType: 'bogus' } } })).toBeUndefined();
    expect(configuredMethod(gemini, { auth: { type: 'oauth-personal' } })).toBeUndefined();
  });

  it('writes it with every other key kept byte for byte, mode 0600 for a new file', () => {
    const dir = tempDir();
    const file = path.join(dir, 'settings.json');
    fs.writeFileSync(
      file,
      '{\n  "telemetry": {"enabled": false},\n  "security": {\n    "folderTrust": {"enabled": true}\n  }\n}\n',
    );
    writeAuthType(gemini, dir, 'oauth-personal', {});
    const text = fs.readFileSync(file, 'utf8');
    expect(JSON.parse(text)).toEqual({
      telemetry: { enabled: false },
      security: { folderTrust: { enabled: true }, auth: { selectedType: 'oauth-personal' } },
    });
    expect(text.startsWith('{\n  "telemetry": {"enabled": false},\n')).toBe(true);
    const fresh = tempDir();
    writeAuthType(gemini, fresh, 'gemini-api-key', {});
    expect(JSON.parse(fs.readFileSync(path.join(fresh, 'settings.json'), 'utf8'))).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
    });
    expect(fs.statSync(path.join(fresh, 'settings.json')).mode & 0o777).toBe(0o600);
  });

  it('reads and edits a settings.json with comments, keeping them (gemini-cli strips comments itself)', () => {
    const dir = tempDir();
    const file = path.join(dir, 'settings.json');
    const before = '// my settings\n{\n  /* theme */ "ui": {"theme": "dark"}, // trailing note\n  "security": {}\n}\n';
    fs.writeFileSync(file, before);
    expect(readProfileSettings(gemini, dir)).toMatchObject({ data: { ui: { theme: 'dark' }, security: {} } });
    expect(readProfileSettings(gemini, dir).error).toBeUndefined();
    writeAuthType(gemini, dir, 'oauth-personal', {});
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toBe(
      before.replace(
        '"security": {}',
        '"security": {\n    "auth": {\n      "selectedType": "oauth-personal"\n    }\n  }',
      ),
    );
    expect(readProfileSettings(gemini, dir).data).toEqual({
      ui: { theme: 'dark' },
      security: { auth: { selectedType: 'oauth-personal' } },
    });
  });

  it('still refuses trailing commas in gemini-cli settings (its JSON.parse does too)', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'settings.json'), '{"ui": {},}');
    expect(readProfileSettings(gemini, dir).error).toMatchObject({ kind: 'syntax', line: 1, column: 11 });
  });

  it('refuses a file that is not JSON, leaving it as it was', () => {
    const dir = tempDir();
    const file = path.join(dir, 'settings.json');
    fs.writeFileSync(file, '{ "telemetry": ');
    expect(() => writeAuthType(gemini, dir, 'oauth-personal', {})).toThrow(/cannot be edited/);
    expect(fs.readFileSync(file, 'utf8')).toBe('{ "telemetry": ');
  });
});

describe('code entry', () => {
  it('a Google URL whose redirect is an https code page is a code-entry URL, not a loopback one', () => {
    const v = validateCodeEntryUrl(CODE_ENTRY_URL);
    expect(v).toMatchObject({
      ok: true,
      value: { redirectUri: 'https://codeassist.google.com/authcode', state: 's1', port: 0 },
    });
    expect(validateAuthUrl(CODE_ENTRY_URL).ok).toBe(false);
    expect(validateCodeEntryUrl(LOOPBACK_URL).ok).toBe(false);
    expect(
      validateCodeEntryUrl('https://evil.example.com/o/oauth2/v2/auth?redirect_uri=https%3A%2F%2Fx&response_type=code')
        .ok,
    ).toBe(false);
  });

  it('takes a bare code or the whole address of the code page, checking state', () => {
    expect(parseCode('  4/0AbCdEf-gh_ij  ', 's1')).toEqual({ ok: true, value: '4/0AbCdEf-gh_ij' });
    expect(parseCode('"4/0AbCdEf"', 's1')).toEqual({ ok: true, value: '4/0AbCdEf' });
    expect(parseCode('https://codeassist.google.com/authcode?code=4%2F0Xyz&state=s1', 's1')).toEqual({
      ok: true,
      value: '4/0Xyz',
    });
    expect(parseCode('https://codeassist.google.com/authcode?code=4%2F0Xyz&state=other', 's1').ok).toBe(false);
    expect(parseCode('https://codeassist.google.com/authcode?error=access_denied', 's1').ok).toBe(false);
    expect(parseCode('4/0Ab cd', 's1').ok).toBe(false);
    expect(parseCode('', 's1').ok).toBe(false);
  });

  it('scrubs an exact secret wherever it appears', () => {
    const s = new Secrets();
    s.add('4/0AbCdEf');
    expect(s.scrub('Enter the authorization code: 4/0AbCdEf and again 4/0AbCdEf')).toBe(
      'Enter the authorization code: [REDACTED] and again [REDACTED]',
    );
  });
});

describe('the interactive sign-in guard', () => {
  it('a sign-in URL in the output means not logged in, or re-authentication when credentials are stored', () => {
    const dir = tempDir();
    const guard = signInGuard(gemini, dir);
    expect(guard('Loaded cached credentials.')).toBeUndefined();
    const none = guard(`Please visit the following URL to authorize the application: ${CODE_ENTRY_URL}`);
    expect(classifyAuthError(none)).toBe('not-authenticated');
    fs.writeFileSync(path.join(dir, 'oauth_creds.json'), '{}', { mode: 0o600 });
    expect(classifyAuthError(guard(LOOPBACK_URL))).toBe('reauth-required');
  });

  it("gemini-cli's missing-API-key answer counts as not logged in", async () => {
    const { AcpError } = await import('../../src/acp/acp-error.js');
    expect(
      classifyAuthError(
        new AcpError('session/new', { code: -32000, message: 'Gemini API key is missing or not configured.' }),
      ),
    ).toBe('not-authenticated');
  });
});

describe('probe cleanup in ~/.gemini', () => {
  function project(geminiDir: string, base: string, slug: string, owner: string): string {
    const dir = path.join(geminiDir, base, slug);
    fs.mkdirSync(path.join(dir, 'chats'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.project_root'), owner);
    return dir;
  }

  it('removes projects of agyctl probe dirs that are gone, keeps live probes and everything else', () => {
    const root = tempDir();
    const geminiDir = path.join(root, '.gemini');
    const env = { TMPDIR: root };
    const gone = path.join(root, 'agyctl-probe-gone');
    const live = path.join(root, 'agyctl-probe-live');
    fs.mkdirSync(live);
    const goneTmp = project(geminiDir, 'tmp', 'agyctl-probe-gone', gone);
    const goneHist = project(geminiDir, 'history', 'agyctl-probe-gone', gone);
    const liveTmp = project(geminiDir, 'tmp', 'agyctl-probe-live', live);
    const user = project(geminiDir, 'tmp', 'myrepo', '/home/u/myrepo');
    fs.writeFileSync(
      path.join(geminiDir, 'projects.json'),
      JSON.stringify({
        projects: { [gone]: 'agyctl-probe-gone', [live]: 'agyctl-probe-live', '/home/u/myrepo': 'myrepo' },
      }),
    );
    const result = removeProbeProjects(geminiDir, env);
    expect(result.failed).toBe(0);
    expect(result.removed.sort()).toEqual([goneHist, goneTmp].sort());
    expect(fs.existsSync(liveTmp) && fs.existsSync(user)).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(geminiDir, 'projects.json'), 'utf8'))).toEqual({
      projects: { [live]: 'agyctl-probe-live', '/home/u/myrepo': 'myrepo' },
    });
    expect(fs.existsSync(path.join(geminiDir, 'projects.json.lock'))).toBe(false);
  });

  it('leaves projects.json alone while gemini-cli holds its lock', () => {
    const root = tempDir();
    const geminiDir = path.join(root, '.gemini');
    const gone = path.join(root, 'agyctl-probe-gone');
    project(geminiDir, 'tmp', 'p', gone);
    const registry = path.join(geminiDir, 'projects.json');
    const text = JSON.stringify({ projects: { [gone]: 'p' } });
    fs.writeFileSync(registry, text);
    fs.mkdirSync(`${registry}.lock`);
    removeProbeProjects(geminiDir, { TMPDIR: root });
    expect(fs.readFileSync(registry, 'utf8')).toBe(text);
    expect(fs.existsSync(`${registry}.lock`)).toBe(true);
  });
});
