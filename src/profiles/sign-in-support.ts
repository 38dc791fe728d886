/**
 * Which servers and methods agyctl can sign in. agyctl signs in Google's ACP
 * servers (the profiles); another vendor's agent (codex-acp, claude-code-acp)
 * gets a plain "not a server agyctl signs in" before anything is started on
 * its side, and a method agyctl cannot capture a sign-in for is refused
 * before the server waits, never left to time out. Telling "another vendor"
 * is a guess (docs/assumptions.md, `signin.foreign-server`): it fails soft,
 * calling a server foreign only when its agentInfo names no Google server
 * and none of its methods is one a profile knows.
 */
import { CLIENT_SIDE_METHOD_TYPES, type InitializeResult, methodType } from '../acp/protocol.js';
import { serverText } from '../acp/redact.js';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import { detectProfile, getProfile, PROFILE_IDS } from './index.js';

/** Words in a Google server's agentInfo (antigravity-acp, gemini-cli, "Google Antigravity"). */
const GOOGLE_WORDS = /antigravity|gemini|google/i;

export interface ForeignServer {
  /** agentInfo.name (title and version when given), sanitised. */
  name: string;
  /** The auth method ids it offers, sanitised. */
  methods: string[];
}

const shown = (v: unknown): string => serverText(String(v), { singleLine: true });

/** The servers the profiles are for, by their agentInfo.name. */
const googleServers = (): string => PROFILE_IDS.flatMap((id) => getProfile(id).agentNames).join(', ');

/** Every auth method id some profile can sign in with. */
export function knownSignInMethods(): string[] {
  return [...new Set(PROFILE_IDS.flatMap((id) => getProfile(id).authMethods))];
}

/** The methods the server signs in itself (type `agent`, or one agyctl does not know): those authenticate may be sent. */
function offeredMethods(init: InitializeResult): string[] {
  return Array.isArray(init.authMethods)
    ? init.authMethods
        .filter((m) => m && typeof m.id === 'string' && !CLIENT_SIDE_METHOD_TYPES.includes(methodType(m)))
        .map((m) => m.id)
    : [];
}

const CLIENT_SIDE_WHY: Record<string, string> = {
  terminal:
    'the server wants to run its own sign-in in an interactive terminal, which is not sent through authenticate',
  env_var: 'the server reads a credential from an environment variable you set, which is not sent through authenticate',
};

/** A `terminal` or `env_var` method is never sent to authenticate: refused with why, before anything starts a sign-in. */
function refuseClientSideMethod(init: InitializeResult, method: string, flag: string): void {
  const m = (Array.isArray(init.authMethods) ? init.authMethods : []).find((x) => x?.id === method);
  const type = m ? methodType(m) : undefined;
  if (type === undefined || !CLIENT_SIDE_METHOD_TYPES.includes(type)) return;
  const others = offeredMethods(init).map(shown);
  throw new AgyError(
    EXIT.usage,
    'method-not-supported',
    `agyctl cannot sign in with ${shown(method)}: it is a ${type} method (${CLIENT_SIDE_WHY[type]}).`,
    {
      hint:
        type === 'terminal'
          ? `run the server's own sign-in in a terminal on this box${others.length > 0 ? `, or use ${flag} with one of: ${others.join(', ')}` : ''}`
          : `set the variable the method names in the server's environment${others.length > 0 ? `, or use ${flag} with one of: ${others.join(', ')}` : ''}`,
    },
  );
}

/** The server when it is clearly not one a profile knows; undefined when it is, or when that is not clear. */
export function foreignServer(init: InitializeResult): ForeignServer | undefined {
  const info = init.agentInfo;
  const name = typeof info?.name === 'string' ? info.name.trim() : '';
  if (name === '' || detectProfile(name) !== undefined) return undefined;
  if (GOOGLE_WORDS.test(name) || GOOGLE_WORDS.test(String(info?.title ?? ''))) return undefined;
  const methods = offeredMethods(init);
  const known = knownSignInMethods();
  if (methods.some((m) => known.includes(m))) return undefined;
  const version = typeof info?.version === 'string' && info.version !== '' ? ` ${info.version}` : '';
  return { name: shown(`${name}${version}`), methods: methods.map(shown) };
}

export function foreignServerError(f: ForeignServer): AgyError {
  const methods = f.methods.length > 0 ? f.methods.join(', ') : '(none listed)';
  return new AgyError(
    EXIT.usage,
    'server-not-supported',
    `agyctl signs in Google's ACP servers (${googleServers()}); this server is ${f.name}, whose methods are ${methods}.`,
    {
      hint: 'sign it in with its own client or command; `agyctl probe` still describes it, and --server / AGYCTL_SERVER choose which server agyctl runs',
      details: { server: f.name, methods: f.methods },
    },
  );
}

/**
 * Before authenticate: refuse a server no profile knows, a method it does not offer (suggesting only methods
 * agyctl can use), and a method it offers that agyctl cannot capture a sign-in for.
 */
export function checkSignInMethod(init: InitializeResult, method: string, flag = '--method'): void {
  const foreign = foreignServer(init);
  if (foreign) throw foreignServerError(foreign);
  refuseClientSideMethod(init, method, flag);
  const offered = offeredMethods(init).map(shown);
  const known = knownSignInMethods();
  const usable = offered.filter((m) => known.includes(m));
  const suggest = usable.length > 0 ? `use ${flag} with one of: ${usable.join(', ')}` : undefined;
  if (offered.length > 0 && usable.length === 0)
    throw new AgyError(
      EXIT.usage,
      'method-not-supported',
      `This server offers none of the auth methods agyctl can sign in with (it offers ${offered.join(', ')}; agyctl knows ${known.join(', ')}).`,
      { hint: 'run `agyctl probe` to see what the server says about itself, and attach it to a bug report' },
    );
  if (offered.length > 0 && !offered.includes(method))
    throw usageError(`This server does not offer the auth method ${method}.`, suggest);
  if (!known.includes(method))
    throw new AgyError(
      EXIT.usage,
      'method-not-supported',
      `agyctl cannot sign in with ${shown(method)}: it is not a method agyctl knows how to complete (it knows ${known.join(', ')}).`,
      { hint: suggest ?? `use ${flag} with one of: ${known.join(', ')}` },
    );
}
