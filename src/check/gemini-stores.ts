/**
 * gemini-cli's other places for a sign-in, read without network: the store
 * GEMINI_FORCE_ENCRYPTED_FILE_STORAGE=true selects (the OS keychain, or
 * `gemini-credentials.json`, AES-256-GCM keyed by host and user name: agyctl
 * cannot read it, and no copy of it works on another host or user), and the
 * account gemini-cli records after each sign-in (`google_accounts.json`,
 * `{"active": "<email>", "old": [...]}`). The email is personal data: shown
 * in the check's line, never a metric label.
 */
import path from 'node:path';
import { serverText } from '../acp/redact.js';
import { lstatOrNull, readFileNoFollow } from '../util/os/safe-fs.js';
import { type Finding, pass, warn } from './check-result.js';

export const ENCRYPTED_STORE_VAR = 'GEMINI_FORCE_ENCRYPTED_FILE_STORAGE';
export const ENCRYPTED_CREDENTIALS = 'gemini-credentials.json';
const ACCOUNTS_FILE = 'google_accounts.json';
/** A small JSON file; anything bigger is not gemini-cli's. */
const MAX_ACCOUNTS_BYTES = 64 * 1024;

export const usesEncryptedStore = (env: NodeJS.ProcessEnv): boolean => env[ENCRYPTED_STORE_VAR] === 'true';

/** Where the credentials are when the encrypted store is on: named, and said to be unreadable to agyctl (not missing). */
export function encryptedStoreFinding(stateDir: string): Finding {
  const file = path.join(stateDir, ENCRYPTED_CREDENTIALS);
  const where = lstatOrNull(file)?.isFile()
    ? `in ${file} (encrypted, bound to this host and user name)`
    : `in the OS keychain (or ${file} once gemini-cli writes it)`;
  return warn(
    `${ENCRYPTED_STORE_VAR}=true: gemini-cli keeps its credentials ${where}; agyctl cannot read that store, so it cannot tell whether they are there or valid`,
    'agyctl check --live --profile gemini-cli decides; a copy of that file on another host or user cannot be decrypted (sign in again there)',
  );
}

/** The account gemini-cli last signed in, from google_accounts.json; undefined when there is none to show. */
export function activeAccount(stateDir: string): string | undefined {
  const file = path.join(stateDir, ACCOUNTS_FILE);
  const st = lstatOrNull(file);
  if (!st?.isFile() || st.size > MAX_ACCOUNTS_BYTES) return undefined;
  try {
    const data = JSON.parse(readFileNoFollow(file).toString('utf8')) as { active?: unknown };
    if (typeof data?.active !== 'string' || data.active.trim() === '') return undefined;
    return serverText(data.active, { singleLine: true }).slice(0, 254);
  } catch {
    return undefined;
  }
}

export function accountFinding(stateDir: string): Finding | undefined {
  const account = activeAccount(stateDir);
  if (!account) return undefined;
  return pass(`signed-in account (${ACCOUNTS_FILE}, read locally): ${account}`, {
    account: { label: 'Google account', email: account, source: 'google_accounts.json' },
  });
}
