/**
 * gemini-cli (`gemini --acp`, npm @google/gemini-cli), measured on 0.61.0:
 * see docs/gemini-cli.md and ../shared/reference/field-notes.md. Two of its
 * habits need no setting here because agyctl handles them for every server:
 * its launcher ignores SIGTERM (AcpServer always signals the whole process
 * group), and it caches a failed sign-in for the life of the process (each
 * `agyctl login` starts a fresh server and never retries in the same one).
 */
import { geminiCliFiles, geminiCliHomeFor, geminiCliStateDir } from './gemini-cli-paths.js';
import type { ServerProfile } from './types.js';

const NO_BACKUP = {
  why: 'gemini-cli keeps its conversations as JSON lines under ~/.gemini/tmp, not in the SQLite store this command works on',
  instead:
    'back up ~/.gemini/tmp with your usual file backup; with GEMINI_FORCE_ENCRYPTED_FILE_STORAGE=true the credentials (the OS keychain, or ~/.gemini/gemini-credentials.json, encrypted for this host and user name) cannot be decrypted elsewhere: a restore onto another host or user loses that login (sign in again there)',
};
const NO_SETTINGS = {
  why: "agyctl settings edits antigravity-acp's auth.type; gemini-cli keeps its choice in security.auth.selectedType",
  instead: 'agyctl login --profile gemini-cli sets it, and agyctl check --profile gemini-cli checks it',
};

export const geminiCli: ServerProfile = {
  id: 'gemini-cli',
  title: 'Gemini CLI (ACP mode)',
  agentNames: ['gemini-cli'],
  defaultStateDir: geminiCliStateDir,
  files(stateDir) {
    const f = geminiCliFiles(stateDir);
    return { settings: f.settings, token: f.token, conversations: undefined };
  },
  // GEMINI_CLI_HOME is gemini-cli's own override of its home: it moves ~/.gemini and nothing else.
  serverEnv(base, stateDir) {
    const home = geminiCliHomeFor(stateDir);
    return home ? { ...base, GEMINI_CLI_HOME: home } : { ...base };
  },
  homeVariable: 'GEMINI_CLI_HOME',
  canSteer: (stateDir) => geminiCliHomeFor(stateDir) !== undefined,
  stateDirShape: '.gemini',
  defaultCommands: [{ name: 'gemini', args: ['--acp'] }],
  installHint:
    'install gemini-cli (npm install -g @google/gemini-cli), or point agyctl at it: --server "/path/to/gemini --acp"',
  settingsComments: true,
  authTypePath: ['security', 'auth', 'selectedType'],
  authMethods: ['oauth-personal', 'gemini-api-key', 'vertex-ai', 'gateway'],
  browserMethods: ['oauth-personal'],
  defaultSignInMethod: 'oauth-personal',
  signInFollowsSettings: true,
  redirectPath: '/oauth2callback',
  // Not measured here: no warning rather than a guessed one.
  oauthClient: undefined,
  unsupported: { backup: NO_BACKUP, restore: NO_BACKUP, sessions: NO_BACKUP, settings: NO_SETTINGS },
  quirks: {
    codeEntryFallback: true,
    signInDuringSession: true,
    authWindowMs: 5 * 60_000,
    writesAuthTypeOnLogin: true,
    listenerGoneGraceMs: 120_000,
    localSignInRecords: true,
  },
};
