/**
 * The settings API other commands use (login, check): read, judge and change
 * the server's settings.json. The CLI command lives in src/cli/commands/settings/.
 */
export { AUTH_TYPES, AUTH_TYPE_INFO, AUTH_TYPE_LIST, LEGACY_AUTH_TYPES, envIsSet, isAuthType, neededEnv, normalizeAuthType } from './auth-types.js';
export type { AuthType, AuthTypeInfo, EnvNeed } from './auth-types.js';
export { readSettings, parseSettingsText } from './read.js';
export type { SettingsError, SettingsFile } from './read.js';
export { authTypeOf, envReport, gcpOf, hasErrors, locationProblem, modeString, problemsOf, projectProblem, rawAuthType, validateSettings, whereToSetEnv } from './validate.js';
export type { Problem } from './validate.js';
export { setAuthType } from './write.js';
export type { SetAuthOptions, SetAuthResult, ValueSource } from './write.js';
export { restartNotice, runningServers } from './servers.js';
export type { RunningServer } from './servers.js';
