/**
 * The auth type in settings.json, where each profile keeps it:
 * antigravity `auth.type` (through the shared settings module, which also
 * knows its legacy names and gcp requirements), gemini-cli
 * `security.auth.selectedType` (the method id itself, written by a minimal
 * splice so every other key keeps its bytes).
 */

import { usageError } from '../core/errors.js';
import type { ProfileId, ServerProfile } from '../profiles/types.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import { setStringAt } from './jsonc.js';
import { readSettings, removeBomCommand, type SettingsFile } from './read.js';
import { authTypeOf, rawAuthType } from './validate.js';
import { setAuthType } from './write.js';

/** settings.json read with the syntax this profile's server accepts (comments for gemini-cli). */
export const readProfileSettings = (profile: ServerProfile, stateDir: string): SettingsFile =>
  readSettings(stateDir, { comments: profile.settingsComments });

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Where the profile keeps the auth type, for messages: `auth.type`, `security.auth.selectedType`. */
export const authTypeKey = (profile: ServerProfile): string => profile.authTypePath.join('.');

interface AuthTypeAccess {
  /** The auth type exactly as written (anything, or undefined when missing). */
  raw(profile: ServerProfile, data: Record<string, unknown> | undefined): unknown;
  /** The method the settings choose, as an auth method id; undefined when missing or unknown. */
  configured(profile: ServerProfile, data: Record<string, unknown> | undefined): string | undefined;
  write(profile: ServerProfile, stateDir: string, method: string, env: NodeJS.ProcessEnv): void;
}

/** A string at the profile's authTypePath, spliced in without touching any other key. */
const atKeyPath: AuthTypeAccess = {
  raw(profile, data) {
    let node: unknown = data;
    for (const key of profile.authTypePath) node = obj(node)?.[key];
    return node;
  },
  configured(profile, data) {
    const raw = atKeyPath.raw(profile, data);
    return typeof raw === 'string' && profile.authMethods.includes(raw) ? raw : undefined;
  },
  write(profile, stateDir, method) {
    const file: SettingsFile = readSettings(stateDir, { noFollow: true, comments: profile.settingsComments }); // a symlinked settings.json is refused (unsafe-symlink)
    // Not JSON, or JSON whose top level is not an object: nothing to splice into.
    if (file.unreadable || (file.exists && file.error && file.data === undefined)) {
      throw usageError(
        `${file.path} cannot be edited (${file.unreadable ?? file.error?.message}).`,
        file.error?.bom
          ? `remove the byte-order mark (${removeBomCommand(file.path)}), then run the command again`
          : `fix the file, then set ${authTypeKey(profile)} to ${method}`,
      );
    }
    const text = file.exists && file.raw !== undefined && file.raw.trim() !== '' ? file.raw : '{}\n';
    writeFileAtomic(
      file.path,
      setStringAt(text, profile.authTypePath, method, { comments: profile.settingsComments }),
      { mode: 0o600 },
    );
  },
};

/** antigravity goes through the shared settings module, which knows its legacy names and gcp requirements. */
const AUTH_TYPE_ACCESS: Readonly<Record<ProfileId, AuthTypeAccess>> = {
  antigravity: {
    raw: (_profile, data) => rawAuthType(data),
    configured: (_profile, data) => authTypeOf(data),
    write: (_profile, stateDir, method, env) => setAuthType(stateDir, method, { env }),
  },
  'gemini-cli': atKeyPath,
};

/** The auth type exactly as written (anything, or undefined when missing). */
export const rawAuthTypeFor = (profile: ServerProfile, data: Record<string, unknown> | undefined): unknown =>
  AUTH_TYPE_ACCESS[profile.id].raw(profile, data);

/** The method the settings choose, as an auth method id; undefined when missing or unknown. */
export const configuredMethod = (
  profile: ServerProfile,
  data: Record<string, unknown> | undefined,
): string | undefined => AUTH_TYPE_ACCESS[profile.id].configured(profile, data);

/** Write the auth type atomically, keeping every other key; a file agyctl cannot edit safely is refused (exit 2). */
export function writeAuthType(profile: ServerProfile, stateDir: string, method: string, env: NodeJS.ProcessEnv): void {
  AUTH_TYPE_ACCESS[profile.id].write(profile, stateDir, method, env);
}
