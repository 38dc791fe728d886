// AGY_SIM_LEAK_SECRETS: a server that spills every token shape agyctl must
// redact, on every channel (stderr, stdout noise, JSON-RPC error message and
// data, its dying words). Every secret value contains LEAK_MARK, so a test
// greps agyctl's outputs for that one word.

import type { LeakMode } from './config.js';
import { RpcError } from './errors.js';
import type { RpcConnection } from './rpc.js';

export const LEAK_MARK = 'LEAKED';

/** One line per shape; the values are the secrets. */
export const LEAK_LINES = [
  `access token ya29.a0${LEAK_MARK}access0123456789`,
  `refresh token 1//0g${LEAK_MARK}refresh0123456789`,
  `api key AIzaSy${LEAK_MARK}0123456789abcdefghijk`,
  `saved {"access_token":"${LEAK_MARK}-at","refresh_token":"${LEAK_MARK}-rt","id_token":"${LEAK_MARK}-it","client_secret":"${LEAK_MARK}-cs"}`,
  `escaped "{\\"refresh_token\\":\\"${LEAK_MARK}-escaped\\"}"`,
  `callback http://127.0.0.1:4000/?state=${LEAK_MARK}-state&code=${LEAK_MARK}-code&scope=x`,
  `got code=${LEAK_MARK}-barecode state=${LEAK_MARK}-barestate`,
  `Authorization: Bearer ${LEAK_MARK}bearer0123456789`,
  `env GEMINI_API_KEY=${LEAK_MARK}-envkey OAUTH_TOKEN=${LEAK_MARK}-envtoken CLIENT_SECRET=${LEAK_MARK}-envsecret`,
];

export function leakError(): RpcError {
  return new RpcError(-32603, `Internal error: ${LEAK_LINES.join('; ')}`, {
    message: LEAK_LINES.join('\n'),
    details: { refresh_token: `1//0g${LEAK_MARK}data0123456789`, text: LEAK_LINES[3] },
  });
}

/** At start: the stderr and stdout-noise leaks. */
export function leakAtStart(mode: LeakMode, rpc: RpcConnection): void {
  if (mode === 'off') return;
  process.stderr.write(LEAK_LINES.map((l) => `${l}\n`).join(''));
  for (const l of LEAK_LINES) rpc.writeRawLine(`noise: ${l}`);
}

/** The failing call: answer with the leaking error, then die with the secrets on stderr. */
export function leakAndDie(die: (code: number, lines: string[]) => never): never {
  setImmediate(() => die(70, ['FATAL: token refresh failed', ...LEAK_LINES]));
  throw leakError();
}
