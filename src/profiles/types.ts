/**
 * A server profile: what differs between the ACP servers agyctl drives
 * (Google's antigravity-acp, and gemini-cli in `--acp` mode). Everything a
 * command needs to know about "which server" goes through one of these, so
 * no command compares server names itself.
 */
import type { ProfileId } from '../core/io.js';

export type { ProfileId, ProfileSource } from '../core/io.js';

export interface ProfileFiles {
  settings: string;
  /** The OAuth credential file the server writes after a browser login. */
  token: string;
  /** Where conversations live, when the profile has a store agyctl can back up. */
  conversations: string | undefined;
}

export interface ProfileQuirks {
  /** Without a browser it prints the URL on stdout and reads a pasted code from stdin. */
  codeEntryFallback: boolean;
  /** session/new without credentials starts an interactive sign-in instead of failing. */
  signInDuringSession: boolean;
  /** The server gives up on authenticate after this long, whatever agyctl's --timeout. */
  authWindowMs: number | undefined;
  /** It rewrites settings.json itself after a successful authenticate. */
  writesAuthTypeOnLogin: boolean;
  /**
   * How long a closed login listener may go unanswered before it counts as
   * gone. gemini-cli closes it after its single request, then makes several
   * network calls (token, user info, Code Assist) before answering.
   */
  listenerGoneGraceMs: number | undefined;
  /**
   * gemini-cli's local sign-in records: the store GEMINI_FORCE_ENCRYPTED_FILE_STORAGE=true selects, and the
   * account file written after each sign-in (check/gemini-stores.ts reads both, without network).
   */
  localSignInRecords?: boolean;
}

export interface ServerProfile {
  id: ProfileId;
  title: string;
  /** initialize's agentInfo.name values that identify this server. */
  agentNames: readonly string[];
  defaultStateDir(env: NodeJS.ProcessEnv): string;
  files(stateDir: string): ProfileFiles;
  /** The server's environment for this state dir (HOME or GEMINI_CLI_HOME steering). */
  serverEnv(base: NodeJS.ProcessEnv, stateDir: string): NodeJS.ProcessEnv;
  /** The variable serverEnv sets to point the server at a state dir (named in messages). */
  homeVariable: 'HOME' | 'GEMINI_CLI_HOME';
  /** Whether serverEnv can point the server at this state dir, and the shape it needs for messages. */
  canSteer(stateDir: string): boolean;
  stateDirShape: string;
  /** Executables looked for on PATH when no --server is given, with the arguments they need. */
  defaultCommands: ReadonlyArray<{ name: string; args: readonly string[] }>;
  /** The fix when no server command is found. */
  installHint: string;
  /** The name `agyctl server install` installs this server under (src/profiles/installed-server.ts); none: not installed by agyctl. */
  installedName?: string;
  /** settings.json may hold // and /* *\/ comments (gemini-cli strips them before JSON.parse). */
  settingsComments: boolean;
  /** Where settings.json names the auth type, as a key path. */
  authTypePath: readonly string[];
  /** Auth method ids this server offers (its initialize list may say more). */
  authMethods: readonly string[];
  /** Methods that sign in through a browser and leave `files().token` behind. */
  browserMethods: readonly string[];
  /** The browser method a sign-in uses when nothing chooses one. */
  defaultSignInMethod: string;
  /** `probe --sign-in` follows the browser method settings.json names (else it always uses the default). */
  signInFollowsSettings: boolean;
  /** The OAuth redirect path on the loopback listener. */
  redirectPath: string;
  /**
   * The OAuth client its sign-in URLs name, as measured (acp-protocol-reference.md, "Captured URL anatomy");
   * a URL naming another client or more scopes gets a warning, never a refusal. undefined: not measured.
   */
  oauthClient: { clientId: string; scopes: readonly string[] } | undefined;
  /** Commands that do not apply (the conversation backup family, antigravity's settings editor): why, and what to do instead. */
  unsupported: Readonly<Record<string, { why: string; instead: string }>>;
  quirks: ProfileQuirks;
}
