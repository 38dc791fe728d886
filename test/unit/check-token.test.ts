import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeInsight, expiryMs, inspectToken } from '../../src/check/token.js';

let dir: string;
let file: string;
const NOW = Date.UTC(2026, 8, 3, 12, 0, 0);
const SECRET = 'ya29.SECRET-VALUE-never-shown';

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-token-'));
  file = path.join(dir, 'acp_token.json');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(content: string, mode = 0o600): void {
  fs.writeFileSync(file, content, { mode });
  fs.chmodSync(file, mode);
}

describe('inspectToken', () => {
  it('a token file that is a symlink is a finding, as login and logout refuse it (unsafe-symlink)', () => {
    const real = path.join(dir, 'elsewhere.json');
    fs.writeFileSync(real, JSON.stringify({ access_token: SECRET, refresh_token: '1//r' }), { mode: 0o600 });
    fs.symlinkSync(real, file);
    const r = inspectToken(file, NOW);
    expect(r.state).toBe('present');
    const findings = r.state === 'present' ? r.findings : [];
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ failure: 'misconfigured' });
    expect(findings[0]?.message).toContain(`${file} (the token file) is a symbolic link to ${real}`);
    expect(findings[0]?.message).toContain('login and logout refuse it');
    expect(findings[0]?.hint).toContain(`rm ${file}`);
    expect(JSON.stringify(r)).not.toContain(SECRET);
  });

  it('reports missing', () => {
    expect(inspectToken(file, NOW).state).toBe('missing');
  });

  it('reads expiry_date (ms), expires_at (s) and expiry (ISO) without keeping any value', () => {
    write(JSON.stringify({ access_token: SECRET, refresh_token: '1//r', expiry_date: NOW + 90_000 }));
    const r = inspectToken(file, NOW);
    expect(r.state === 'present' && r.findings).toEqual([]);
    expect(r.state === 'present' && r.insight).toMatchObject({
      mode: '0600',
      modeOk: true,
      refreshToken: true,
      expiresInS: 90,
    });
    expect(JSON.stringify(r)).not.toContain(SECRET);
    expect(expiryMs({ expires_at: (NOW + 10_000) / 1000 })).toBe(NOW + 10_000);
    expect(expiryMs({ expiry: new Date(NOW - 5000).toISOString() })).toBe(NOW - 5000);
    expect(expiryMs({ token: { expiry_date: NOW } })).toBe(NOW);
    expect(expiryMs({ access_token: 'x' })).toBeUndefined();
  });

  it('says whether it knows the fields: only then is a missing refresh token a fact', () => {
    write(JSON.stringify({ access_token: SECRET, expiry_date: NOW + 3_600_000 }));
    const known = inspectToken(file, NOW);
    expect(known.state === 'present' && [known.insight.fields, known.insight.refreshToken]).toEqual(['known', false]);
    expect(known.state === 'present' && known.writtenMs).toBe(fs.statSync(file).mtimeMs);
    write(JSON.stringify({ token: { refreshToken: 'r' } }));
    const nested = inspectToken(file, NOW);
    expect(nested.state === 'present' && [nested.insight.fields, nested.insight.refreshToken]).toEqual(['known', true]);
    write(JSON.stringify({ credential: 'opaque', kind: 'something new' }));
    const unknown = inspectToken(file, NOW);
    expect(unknown.state === 'present' && [unknown.insight.fields, unknown.insight.refreshToken]).toEqual([
      'unknown',
      null,
    ]);
    write('not json');
    const broken = inspectToken(file, NOW);
    expect(broken.state === 'present' && broken.insight.fields).toBe('not-json');
  });

  it('flags mode 0644 with the chmod that fixes it', () => {
    write(JSON.stringify({ refresh_token: 'r' }), 0o644);
    const r = inspectToken(file, NOW);
    expect(r.state).toBe('present');
    if (r.state !== 'present') return;
    expect(r.insight.modeOk).toBe(false);
    expect(r.findings[0]).toMatchObject({ failure: 'misconfigured', hint: `run: chmod 600 ${file}` });
    expect(r.findings[0]!.message).toContain('0644');
  });

  it('flags a token owned by someone else', () => {
    write('{}');
    const r = inspectToken(file, NOW, (process.getuid?.() ?? 0) + 1);
    expect(r.state === 'present' && r.findings.map((f) => f.message).join()).toMatch(/owned by uid/);
  });

  it('calls an empty file "not logged in"', () => {
    write('');
    const empty = inspectToken(file, NOW);
    expect(empty.state === 'present' && empty.findings[0]).toMatchObject({
      failure: 'not-authenticated',
      hint: 'run: agyctl login',
    });
  });

  it('a file that is not JSON is a guess gone wrong, not "not logged in": no finding, fields not-json, text never echoed', () => {
    write(`{"access_token": "${SECRET}", oops`);
    const broken = inspectToken(file, NOW);
    expect(broken.state === 'present' && broken.findings).toEqual([]);
    expect(broken.state === 'present' && broken.insight).toMatchObject({ fields: 'not-json', refreshToken: null });
    expect(JSON.stringify(broken)).not.toContain('SECRET');
  });

  it('fields under names agyctl does not know: refresh token unknown (null), never "no refresh token"', () => {
    write(JSON.stringify({ credential: { bearer: SECRET, renewWith: '1//r' }, kind: 'oauth2' }));
    const r = inspectToken(file, NOW);
    expect(r.state === 'present' && r.insight).toMatchObject({
      refreshToken: null,
      expiresInS: null,
      fields: 'unknown',
    });
    write(JSON.stringify({ access_token: SECRET, expiry_date: NOW }));
    const known = inspectToken(file, NOW);
    expect(known.state === 'present' && known.insight).toMatchObject({ refreshToken: false, fields: 'known' });
  });

  it('refuses a directory in place of the file', () => {
    fs.mkdirSync(file);
    const r = inspectToken(file, NOW);
    expect(r.state === 'present' && r.findings[0]!.message).toMatch(/not a regular file/);
  });
});

describe('describeInsight', () => {
  it('says when the access token expires as a human duration, not raw seconds', () => {
    const base = { modeOk: true, fields: 'known' as const, refreshToken: true };
    const ago = describeInsight({ ...base, expiresInS: -1_796_283_117 } as never).text;
    expect(ago).toContain('access token expired 56y350d ago');
    expect(ago).not.toMatch(/\d{4,}s/);
    expect(describeInsight({ ...base, expiresInS: 3_000 } as never).text).toContain('access token expires in 50m00s');
  });

  const base = { mode: '0600', modeOk: true, ageS: 1, fields: 'known' as const };
  it('an expired access token with a refresh token is fine', () => {
    expect(describeInsight({ ...base, refreshToken: true, expiresInS: -600 }).warning).toBeUndefined();
  });
  it('an expired access token without a refresh token is a warning', () => {
    expect(describeInsight({ ...base, refreshToken: false, expiresInS: -600 }).warning).toMatch(/no refresh token/);
  });
  it('an expired access token whose refresh token is unknown is no warning', () => {
    const d = describeInsight({ ...base, refreshToken: null, expiresInS: -600 });
    expect(d.warning).toBeUndefined();
    expect(d.text).toMatch(/refresh token unknown/);
  });
  it('contents that are not JSON are a note (a warning that fails nothing), not a verdict', () => {
    const d = describeInsight({ ...base, fields: 'not-json', refreshToken: null, expiresInS: null });
    expect(d.text).toMatch(/not JSON/);
    expect(d.warning).toMatch(/check --live/);
  });
  it('says when the expiry is not recorded', () => {
    expect(describeInsight({ ...base, refreshToken: true, expiresInS: null }).text).toMatch(/not recorded/);
  });
});
