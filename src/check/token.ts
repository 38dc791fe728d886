/**
 * acp_token.json inspection. The file is a credential: it is read only to
 * parse it, and nothing derived from it leaves this module except booleans
 * and numbers (mode, age, refresh token present, seconds to expiry). Parser
 * messages are never surfaced: V8 quotes the offending text in them.
 */
import fs from 'node:fs';
import { formatDuration } from '../util/duration.js';
import { lstatOrNull, unsafeSymlinkError } from '../util/os/safe-fs.js';
import { LOGIN_HINT } from './check-result.js';
import type { Status, TokenInsight } from './types.js';

export interface TokenFinding {
  failure: Exclude<Status, 'ok'>;
  message: string;
  hint: string;
  /** The finding only says the credentials are not readable in this file (missing content, unreadable, not JSON): a live session without authenticate overrules it. */
  whereNot?: true;
}

export type TokenInspection =
  | { state: 'missing' }
  | {
      state: 'present';
      findings: TokenFinding[];
      insight: TokenInsight;
      /** ms since the epoch, the file's mtime. */
      writtenMs?: number;
    };

/** Nested objects some token writers use ({"token": {...}}); one level is enough. */
function candidates(doc: Record<string, unknown>): Array<Record<string, unknown>> {
  const nested = Object.values(doc).filter(
    (v): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v),
  );
  return [doc, ...nested];
}

/** An epoch in ms or s (by magnitude), or an ISO date string, as ms. */
function epochMs(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v > 1e11 ? v : v * 1000;
  if (typeof v === 'string' && v.trim() !== '') {
    if (/^\d+(\.\d+)?$/.test(v.trim())) return epochMs(Number(v));
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

export function expiryMs(doc: Record<string, unknown>): number | undefined {
  for (const c of candidates(doc)) {
    for (const key of EXPIRY_KEYS) {
      const ms = epochMs(c[key]);
      if (ms !== undefined) return ms;
    }
  }
  return undefined;
}

const ACCESS_KEYS = ['access_token', 'accessToken'];
const REFRESH_KEYS = ['refresh_token', 'refreshToken'];
const EXPIRY_KEYS = ['expiry_date', 'expires_at', 'expiry', 'expiresAt', 'expiryDate'];

const hasString = (c: Record<string, unknown>, keys: readonly string[]): boolean =>
  keys.some((k) => typeof c[k] === 'string' && (c[k] as string).length > 0);

/**
 * true: a refresh token under a name agyctl knows. false: the file has the
 * access token by a known name but no refresh token beside it. null: neither
 * name is there, so the file's shape is not one agyctl knows and the
 * absence of a refresh token proves nothing (docs/assumptions.md).
 */
export function hasRefreshToken(doc: Record<string, unknown>): boolean | null {
  const all = candidates(doc);
  if (all.some((c) => hasString(c, REFRESH_KEYS))) return true;
  return all.some((c) => hasString(c, ACCESS_KEYS)) ? false : null;
}

/** Parse without letting the text escape: 'unreadable', or undefined for anything not a JSON object. */
function parseQuietly(file: string): Record<string, unknown> | 'unreadable' | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return 'unreadable';
  }
  try {
    const doc: unknown = JSON.parse(text);
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function fileFindings(file: string, st: fs.Stats, uid: number | undefined): TokenFinding[] {
  const findings: TokenFinding[] = [];
  const mode = st.mode & 0o7777;
  if (uid !== undefined && st.uid !== uid) {
    findings.push({
      failure: 'misconfigured',
      message: `${file} is owned by uid ${st.uid}, not by you (uid ${uid})`,
      hint: `run: chown ${uid} ${file}`,
    });
  }
  if (mode !== 0o600) {
    findings.push({
      failure: 'misconfigured',
      message: `${file} has mode ${mode.toString(8).padStart(4, '0')}, must be 0600`,
      hint: `run: chmod 600 ${file}`,
    });
  }
  return findings;
}

/** The rule login and logout apply (unsafe-symlink): a linked token file is a finding here, not a pass through the link. */
function linkedToken(file: string): TokenInspection | undefined {
  if (!lstatOrNull(file)?.isSymbolicLink()) return undefined;
  const refusal = unsafeSymlinkError(file, 'the token file');
  return {
    state: 'present',
    insight: { mode: '?', modeOk: false, ageS: 0, refreshToken: null, expiresInS: null, fields: 'unknown' },
    findings: [
      {
        failure: 'misconfigured',
        message: refusal.message.replace(/ Nothing was changed\.$/, ' login and logout refuse it.'),
        hint: refusal.hint ?? `remove it: rm ${file}`,
      },
    ],
  };
}

export function inspectToken(file: string, now: number, uid = process.getuid?.()): TokenInspection {
  const linked = linkedToken(file);
  if (linked) return linked;
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { state: 'missing' };
    const insight: TokenInsight = {
      mode: '?',
      modeOk: false,
      ageS: 0,
      refreshToken: null,
      expiresInS: null,
      fields: 'unknown',
    };
    return {
      state: 'present',
      insight,
      findings: [
        {
          failure: 'misconfigured',
          message: `${file} cannot be examined (${code ?? 'error'})`,
          hint: `check the permissions of ${file} and its directory`,
          whereNot: true,
        },
      ],
    };
  }
  const insight: TokenInsight = {
    mode: (st.mode & 0o7777).toString(8).padStart(4, '0'),
    modeOk: (st.mode & 0o7777) === 0o600,
    ageS: Math.max(0, Math.round((now - st.mtimeMs) / 1000)),
    refreshToken: null,
    expiresInS: null,
    fields: 'unknown',
  };
  const writtenMs = st.mtimeMs;
  if (!st.isFile()) {
    return {
      state: 'present',
      insight,
      writtenMs,
      findings: [
        { failure: 'misconfigured', message: `${file} is not a regular file`, hint: `remove it and ${LOGIN_HINT}` },
      ],
    };
  }
  const findings = fileFindings(file, st, uid);
  const doc = st.size === 0 ? undefined : parseQuietly(file);
  if (doc === 'unreadable') {
    findings.push({
      failure: 'misconfigured',
      message: `${file} is not readable by you`,
      hint: `run: chmod 600 ${file}`,
      whereNot: true,
    });
    return { state: 'present', insight, findings, writtenMs };
  }
  if (st.size === 0) {
    findings.push({ failure: 'not-authenticated', message: `${file} is empty`, hint: LOGIN_HINT, whereNot: true });
    return { state: 'present', insight, findings, writtenMs };
  }
  // That the file is JSON is a guess (the reference gives its name, mode and size only): other contents are a note.
  if (!doc) {
    insight.fields = 'not-json';
    return { state: 'present', insight, findings, writtenMs };
  }
  insight.refreshToken = hasRefreshToken(doc);
  const exp = expiryMs(doc);
  insight.expiresInS = exp === undefined ? null : Math.round((exp - now) / 1000);
  insight.fields = insight.refreshToken === null && exp === undefined ? 'unknown' : 'known';
  return { state: 'present', insight, findings, writtenMs };
}

/**
 * One line about the credential's lifetime; an expired access token with a
 * refresh token is normal. `dead`: the fields agyctl knows say the token
 * cannot work (expired, nothing to renew it with): a failing finding, not a
 * warning. Fields it does not know never make one.
 */
export function describeInsight(i: TokenInsight): { text: string; warning?: string; dead?: true } {
  if (i.fields === 'not-json')
    return {
      text: 'contents are not JSON agyctl can read: refresh token and expiry unknown',
      warning: 'this server build may store its token differently; `agyctl check --live` shows whether it is accepted',
    };
  if (i.fields === 'unknown')
    return { text: 'fields are not ones agyctl knows (see docs/assumptions.md): refresh token and expiry unknown' };
  const refresh =
    i.refreshToken === null
      ? 'refresh token unknown (not under a name agyctl knows)'
      : i.refreshToken
        ? 'refresh token present'
        : 'no refresh token';
  if (i.expiresInS === null) return { text: `${refresh}; expiry not recorded` };
  const when =
    i.expiresInS >= 0
      ? `access token expires in ${formatDuration(i.expiresInS * 1000)}`
      : `access token expired ${formatDuration(-i.expiresInS * 1000)} ago`;
  if (i.expiresInS < 0 && i.refreshToken === false)
    return {
      text: `${refresh}; ${when}`,
      warning: 'the access token has expired and there is no refresh token to renew it',
      dead: true,
    };
  return { text: `${refresh}; ${when}${i.expiresInS < 0 ? ' (renewed on next use)' : ''}` };
}
