/**
 * The settings API other commands use (login, check): read, judge and change
 * the server's settings.json. The CLI command lives in src/cli/commands/settings/.
 */

export type { AuthType, AuthTypeInfo, EnvNeed } from './auth-types.js';
export {
  AUTH_TYPE_INFO,
  AUTH_TYPE_LIST,
  AUTH_TYPES,
  envIsSet,
  isAuthType,
  LEGACY_AUTH_TYPES,
  neededEnv,
  normalizeAuthType,
} from './auth-types.js';
export type { SettingsError, SettingsFile } from './read.js';
export { parseSettingsText, readSettings } from './read.js';
export type { ServerProcess } from './servers.js';
export { restartNotice, runningServers } from './servers.js';
export type { Problem } from './validate.js';
export {
  authTypeOf,
  envReport,
  gcpOf,
  hasErrors,
  locationProblem,
  modeString,
  problemsOf,
  projectProblem,
  rawAuthType,
  validateSettings,
  whereToSetEnv,
} from './validate.js';
export type { SetAuthOptions, SetAuthResult, ValueSource } from './write.js';
export { setAuthType } from './write.js';
