/**
 * The rows of `probe --assumptions` that the state dir shows by itself:
 * settings.json, the token file (mode and field names, never a value),
 * conversations/ and brain/ naming, .meta shape. Read only, links never
 * followed, every file bounded; nothing is opened as a database.
 */
import fs from 'node:fs';
import path from 'node:path';
import { inspectToken } from '../check/token.js';
import { CONVERSATION_FILE, stateFiles, unrecognisedEntries } from '../core/paths.js';
import { isUuid, showUntrusted } from '../core/safe-path.js';
import { readSettings } from '../settings/index.js';
import { lstatOrNull, readFileNoFollow } from '../util/os/safe-fs.js';
import { type Assumption, differs, held, unknown } from './assumption.js';

/** Conversations looked at for the per-file rows (.meta, header): enough to see a shape, bounded on a big box. */
const MAX_EXAMINED = 200;
const MAX_META_BYTES = 64 * 1024;
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

const few = (names: readonly string[]): string =>
  `${names
    .slice(0, 3)
    .map((n) => showUntrusted(n))
    .join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''}`;

function settingsRow(stateDir: string): Assumption {
  const id = 'settings.auth-type';
  const fact = 'settings.json is a JSON object; auth.type names the auth method';
  const s = readSettings(stateDir, { noFollow: true });
  if (!s.exists) return unknown(id, fact, 'no settings.json');
  if (s.unreadable) return unknown(id, fact, `settings.json cannot be read (${s.unreadable})`);
  if (s.error) return differs(id, fact, `settings.json: ${s.error.kind === 'syntax' ? 'not JSON' : s.error.message}`);
  const auth = s.data?.auth as { type?: unknown } | undefined;
  if (auth === undefined) return unknown(id, fact, 'settings.json has no auth key');
  return typeof auth.type === 'string'
    ? held(id, fact)
    : differs(id, fact, `auth.type is a ${typeof auth.type}, not a string`);
}

function tokenRows(stateDir: string, now: number): Assumption[] {
  const file = stateFiles(stateDir).token;
  const facts = {
    mode: 'the OAuth credential is acp_token.json in the state dir, mode 0600',
    json: 'acp_token.json is a JSON object',
    expiry: 'acp_token.json records the access token expiry (expiry_date, expires_at, expiry, expiresAt, expiryDate)',
    refresh: 'acp_token.json names its refresh token refresh_token (or refreshToken) beside access_token',
  };
  const inspection = inspectToken(file, now);
  if (inspection.state === 'missing') {
    const why = 'no acp_token.json (not signed in with OAuth here, or this build keeps its credential elsewhere)';
    return Object.entries(facts).map(([k, fact]) => unknown(`token.${k}`, fact, why));
  }
  const i = inspection.insight;
  const rows = [
    i.modeOk ? held('token.mode', facts.mode) : differs('token.mode', facts.mode, `mode ${i.mode}`),
    i.fields === 'not-json'
      ? differs('token.json', facts.json, 'contents are not JSON')
      : held('token.json', facts.json),
  ];
  if (i.fields === 'not-json') {
    rows.push(unknown('token.expiry', facts.expiry, 'not JSON'), unknown('token.refresh', facts.refresh, 'not JSON'));
    return rows;
  }
  rows.push(
    i.expiresInS === null
      ? differs('token.expiry', facts.expiry, 'no expiry under a name agyctl knows')
      : held('token.expiry', facts.expiry),
    i.refreshToken === null
      ? differs('token.refresh', facts.refresh, 'neither access_token nor refresh_token is there (other field names)')
      : held('token.refresh', facts.refresh, i.refreshToken ? null : 'access_token without a refresh token'),
  );
  return rows;
}

interface Listing {
  dir: string;
  names: string[];
  /** Stems of the recognised `<stem>.db` files. */
  dbStems: string[];
}

function listConversations(stateDir: string): Listing | undefined {
  const dir = stateFiles(stateDir).conversations;
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return undefined;
  }
  const dbStems = names.flatMap((n) => {
    const m = CONVERSATION_FILE.exec(n);
    return m && m[2] === 'db' ? [m[1]!] : [];
  });
  return { dir, names, dbStems };
}

function namingRows(l: Listing | undefined): Assumption[] {
  const naming = 'conversations/ holds <id>.db, <id>.db-wal, <id>.db-shm and <id>.meta, nothing else';
  const ids = "a conversation's file stem is its session id, a UUID";
  if (!l)
    return [
      unknown('conversations.naming', naming, 'no conversations/ yet'),
      unknown('conversations.ids', ids, 'no conversations/ yet'),
    ];
  const odd = unrecognisedEntries(l.dir);
  const stems = [...new Set(l.names.flatMap((n) => CONVERSATION_FILE.exec(n)?.[1] ?? []))];
  const notUuid = stems.filter((s) => !isUuid(s));
  return [
    odd.length > 0
      ? differs(
          'conversations.naming',
          naming,
          `${odd.length} other ${odd.length === 1 ? 'entry' : 'entries'}: ${few(odd)}`,
        )
      : l.names.length === 0
        ? unknown('conversations.naming', naming, 'conversations/ is empty')
        : held('conversations.naming', naming),
    notUuid.length > 0
      ? differs('conversations.ids', ids, `stems that are not UUIDs: ${few(notUuid)}`)
      : stems.length === 0
        ? unknown('conversations.ids', ids, 'no conversation files')
        : held('conversations.ids', ids),
  ];
}

/** The first bytes of a database: SQLite's magic, and bytes 18-19 = 2 for WAL mode. Links are not followed. */
function headerOf(file: string): 'wal' | 'rollback' | 'empty' | 'not-sqlite' | 'unreadable' {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    const head = Buffer.alloc(20);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    if (n === 0) return 'empty';
    if (n < 20 || !head.subarray(0, 16).equals(SQLITE_HEADER)) return 'not-sqlite';
    return head[18] === 2 && head[19] === 2 ? 'wal' : 'rollback';
  } catch {
    return 'unreadable';
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function databaseRow(l: Listing | undefined): Assumption {
  const id = 'conversations.sqlite-wal';
  const fact = 'each <id>.db is a SQLite 3 database in WAL mode';
  if (!l || l.dbStems.length === 0) return unknown(id, fact, 'no <id>.db files');
  const kinds = new Map<string, number>();
  for (const stem of l.dbStems.slice(0, MAX_EXAMINED)) {
    const k = headerOf(path.join(l.dir, `${stem}.db`));
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  const other = [...kinds].filter(([k]) => k !== 'wal' && k !== 'empty');
  if (other.length === 0) return held(id, fact);
  return differs(id, fact, other.map(([k, n]) => `${n} ${k === 'rollback' ? 'not in WAL mode' : k}`).join(', '));
}

type MetaRead = { kind: 'missing' | 'unreadable' | 'not-json' | 'no-cwd' } | { kind: 'ok'; keys: string[] };

function readMeta(file: string): MetaRead {
  const st = lstatOrNull(file);
  if (!st) return { kind: 'missing' };
  if (!st.isFile() || st.size > MAX_META_BYTES) return { kind: 'unreadable' };
  let doc: unknown;
  try {
    doc = JSON.parse(readFileNoFollow(file).toString('utf8'));
  } catch (err) {
    return { kind: err instanceof SyntaxError ? 'not-json' : 'unreadable' };
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return { kind: 'not-json' };
  const keys = Object.keys(doc);
  return typeof (doc as { cwd?: unknown }).cwd === 'string' ? { kind: 'ok', keys } : { kind: 'no-cwd' };
}

function metaRows(l: Listing | undefined): Assumption[] {
  const present = 'each conversation has a <id>.meta beside its database';
  const cwd = '<id>.meta is a JSON object whose cwd is the session cwd';
  const only = '<id>.meta holds nothing agyctl relies on beyond cwd (other keys are copied, never read)';
  if (!l || l.dbStems.length === 0) {
    const why = 'no conversations';
    return [unknown('meta.present', present, why), unknown('meta.cwd', cwd, why), unknown('meta.keys', only, why)];
  }
  const reads = l.dbStems.slice(0, MAX_EXAMINED).map((s) => readMeta(path.join(l.dir, `${s}.meta`)));
  const count = (k: MetaRead['kind']): number => reads.filter((r) => r.kind === k).length;
  const missing = count('missing');
  const bad = reads.length - missing - count('ok');
  const extra = [...new Set(reads.flatMap((r) => (r.kind === 'ok' ? r.keys.filter((k) => k !== 'cwd') : [])))].sort();
  return [
    missing > 0
      ? differs('meta.present', present, `${missing} of ${reads.length} conversations have no .meta`)
      : held('meta.present', present),
    bad > 0
      ? differs('meta.cwd', cwd, `${bad} of ${reads.length - missing} .meta files: ${describeBad(reads)}`)
      : reads.length === missing
        ? unknown('meta.cwd', cwd, 'no .meta files')
        : held('meta.cwd', cwd),
    extra.length > 0 ? held('meta.keys', only, `other keys: ${few(extra)}`) : held('meta.keys', only),
  ];
}

function describeBad(reads: MetaRead[]): string {
  const by = (k: MetaRead['kind'], what: string): string[] => {
    const n = reads.filter((r) => r.kind === k).length;
    return n > 0 ? [`${n} ${what}`] : [];
  };
  return [
    ...by('no-cwd', 'without a string cwd'),
    ...by('not-json', 'not a JSON object'),
    ...by('unreadable', 'unreadable'),
  ].join(', ');
}

function brainRow(stateDir: string, l: Listing | undefined): Assumption {
  const id = 'brain.layout';
  const fact = "a session's artifacts live in brain/<id>/, a directory named by its session id";
  const dir = path.join(stateDir, 'brain');
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return unknown(id, fact, 'no brain/ directory (no session has written an artifact yet)');
  }
  if (entries.length === 0) return unknown(id, fact, 'brain/ is empty');
  const known = new Set(l?.dbStems ?? []);
  const odd = entries.filter((e) => !e.isDirectory() || !isUuid(e.name)).map((e) => e.name);
  const orphans = entries.filter((e) => e.isDirectory() && isUuid(e.name) && !known.has(e.name)).map((e) => e.name);
  if (odd.length > 0) return differs(id, fact, `entries that are not a session-id directory: ${few(odd)}`);
  if (orphans.length > 0)
    return differs(
      id,
      fact,
      `${orphans.length} brain/ ${orphans.length === 1 ? 'directory has' : 'directories have'} no conversation of that id`,
    );
  return held(id, fact);
}

export function stateDirAssumptions(stateDir: string, now: number): Assumption[] {
  const listing = listConversations(stateDir);
  return [
    settingsRow(stateDir),
    ...tokenRows(stateDir, now),
    ...namingRows(listing),
    databaseRow(listing),
    ...metaRows(listing),
    brainRow(stateDir, listing),
  ];
}
