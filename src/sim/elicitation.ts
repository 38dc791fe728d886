// ACP URL elicitation (AGY_SIM_ELICITATION): a build that shows its sign-in
// page by asking the client, with `elicitation/create` in url mode tied by
// `requestId` to the pending authenticate, as the ACP specification says
// (agentclientprotocol/agent-client-protocol, docs/rfds/elicitation.mdx). It
// asks only a client that advertised clientCapabilities.elicitation.url, and
// like codex-acp it cancels its sign-in when the answer is anything but
// `accept` (an error such as -32601 included). `elicitation/complete` follows
// the end of the page step; the authenticate answer comes after it.
import { randomBytes } from 'node:crypto';
import type { SimContext } from './context.js';
import { authFailed, type RpcError } from './errors.js';
import type { Id } from './rpc.js';

export const ELICITATION_MESSAGE = 'Sign in with your Google account to use Antigravity.';
/** AGY_SIM_HOSTILE_SIGN_IN: an RLO that reverses what follows, a zero-width space, and a lookalike URL to click. */
export const HOSTILE_MESSAGE =
  'Sign in at https://accounts.google.com.evil.example/signin \u202emoc.elgoog\u202c\u200b to keep your work.';
/** Google's device-code page; the user code is on it. */
export const DEVICE_PAGE = 'https://www.google.com/device';

export function advertisesUrlElicitation(capabilities: unknown): boolean {
  const e = (capabilities as { elicitation?: { url?: unknown } } | undefined)?.elicitation;
  return typeof e === 'object' && e !== null && typeof e.url === 'object' && e.url !== null;
}

export interface Elicitation {
  id: string;
  /** Ask the client to show `url`; resolves with its action, or `error <code>` when it answered with an error. */
  ask(url: string): Promise<string>;
  /** The page step ended. */
  complete(): void;
  /** Withdraw the asked URL: `$/cancel_request` naming the elicitation/create request (AGY_SIM_ELICITATION_WITHDRAW). */
  withdraw(): void;
}

export function elicitation(ctx: SimContext, requestId: Id): Elicitation {
  const id = `agy-sim-signin-${randomBytes(4).toString('hex')}`;
  let askedAs: number | undefined;
  return {
    id,
    async ask(url) {
      try {
        const params = {
          mode: 'url',
          requestId,
          elicitationId: id,
          url,
          message: ctx.config.elicitation.hostile ? HOSTILE_MESSAGE : ELICITATION_MESSAGE,
        };
        const result = await ctx.rpc.request('elicitation/create', params, (sent) => (askedAs = sent));
        const action = (result as { action?: unknown } | null)?.action;
        return typeof action === 'string' ? action : 'no action';
      } catch (err) {
        return `error ${String((err as { code?: unknown })?.code ?? '?')}`;
      }
    },
    complete: () => ctx.rpc.notify('elicitation/complete', { elicitationId: id }),
    withdraw: () => {
      if (askedAs !== undefined) ctx.rpc.notify('$/cancel_request', { requestId: askedAs });
    },
  };
}

/** The sign-in after a withdrawn page: `fail` answers it with an onboarding error, `silent` never answers it. */
export function withdrawnSignIn(): RpcError {
  return authFailed('Onboarding failed: the sign-in page was withdrawn before the sign-in completed.');
}

export function signInCancelled(answer: string): RpcError {
  return authFailed(`Sign-in cancelled: the client answered the sign-in page with ${answer}.`);
}

export function onlyThroughElicitation(): RpcError {
  return authFailed(
    'This build shows its sign-in page only through ACP URL elicitation, and the client did not advertise clientCapabilities.elicitation.url.',
  );
}

/** A device-code page: no listener; the user finishes on Google's page and the server learns it itself. */
export function deviceSignIn(ctx: SimContext, requestId: Id, onAuthorized: () => void): Promise<Record<string, never>> {
  const el = elicitation(ctx, requestId);
  const { deviceApproveMs, completeEarly } = ctx.config.elicitation;
  const userCode = `${randomBytes(2).toString('hex')}-${randomBytes(2).toString('hex')}`.toUpperCase();
  return el.ask(`${DEVICE_PAGE}?user_code=${userCode}`).then((answer) => {
    if (answer !== 'accept') throw signInCancelled(answer);
    if (completeEarly) el.complete();
    return new Promise((resolve) => setTimeout(resolve, deviceApproveMs)).then(() => {
      onAuthorized();
      if (!completeEarly) el.complete();
      return {};
    });
  });
}
