/** Google's antigravity-acp server (RC01 and later): the profile agyctl was built for. */
import { defaultStateDir, serverHomeFor, stateFiles } from '../core/paths.js';
import type { ServerProfile } from './types.js';

export const antigravity: ServerProfile = {
  id: 'antigravity',
  title: 'Google antigravity-acp',
  agentNames: ['antigravity-acp'],
  defaultStateDir,
  files(stateDir) {
    const f = stateFiles(stateDir);
    return { settings: f.settings, token: f.token, conversations: f.conversations };
  },
  // The server has no state-dir flag: it derives `$HOME/.gemini/antigravity-acp` from HOME.
  serverEnv(base, stateDir) {
    const home = serverHomeFor(stateDir);
    return home ? { ...base, HOME: home } : { ...base };
  },
  homeVariable: 'HOME',
  canSteer: (stateDir) => serverHomeFor(stateDir) !== undefined,
  stateDirShape: '.gemini/antigravity-acp',
  defaultCommands: [
    { name: 'agy_acp_server', args: [] },
    { name: 'agy_acp_server.par', args: [] },
    { name: 'antigravity-acp', args: [] },
  ],
  installedName: 'antigravity-acp',
  installHint:
    'install the antigravity-acp server (agyctl server install ARCHIVE --sha256 HEX, docs/server.md), or point agyctl at it: --server /path/to/agy_acp_server (or export AGYCTL_SERVER="/path/to/agy_acp_server --debug")',
  // Plain JSON as far as anyone knows: agyctl writes none, and reads a file with comments leniently (a warning, docs/assumptions.md).
  settingsComments: false,
  authTypePath: ['auth', 'type'],
  // The order of settings' AUTH_TYPES (a unit test keeps them in step): messages list them this way.
  authMethods: ['oauth-personal', 'gemini-api-key', 'oauth-business', 'agent-platform'],
  browserMethods: ['oauth-personal', 'oauth-business'],
  defaultSignInMethod: 'oauth-personal',
  // The probe starts a personal sign-in whatever settings.json says: it only needs to see one start.
  signInFollowsSettings: false,
  redirectPath: '/',
  oauthClient: {
    clientId: '1071006060591-tmhssin2h21lcre235vtolojh4g403ep.apps.googleusercontent.com',
    scopes: [
      'https://www.googleapis.com/auth/cloud-platform',
      'https://www.googleapis.com/auth/userinfo.email',
      'https://www.googleapis.com/auth/aicode',
    ],
  },
  unsupported: {},
  quirks: {
    codeEntryFallback: false,
    signInDuringSession: false,
    authWindowMs: undefined,
    writesAuthTypeOnLogin: false,
    listenerGoneGraceMs: undefined,
  },
};
