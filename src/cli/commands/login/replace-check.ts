/**
 * Before a login replaces a credential that `check` accepts: say so, and on
 * a terminal ask (no by default); `--force` signs in again without asking.
 * Without a terminal (scripts, `connect`'s remote login, which runs only
 * after a failing live check) the login goes on after saying so, since a
 * credential the static check accepts may still be refused by the server.
 */
import path from 'node:path';
import readline from 'node:readline';
import { describeInsight, inspectToken } from '../../../check/token.js';
import { TimeoutError } from '../../../core/errors.js';
import { profileOf } from '../../../profiles/index.js';
import { withDeadline } from '../../../util/deadline.js';
import type { HandlerIO } from '../../context.js';

const ANSWER_MS = 120_000;

/** The sentence about a credential the static check accepts, or undefined when there is none. */
export function acceptedCredential(io: HandlerIO): string | undefined {
  const file = profileOf(io.opts).files(io.opts.stateDir).token;
  const seen = inspectToken(file, Date.now());
  if (seen.state !== 'present' || seen.findings.length > 0 || seen.insight.fields !== 'known') return undefined;
  const d = describeInsight(seen.insight);
  if (d.dead || d.warning) return undefined;
  return `${path.basename(file)} already holds a credential \`agyctl check\` accepts (${d.text})`;
}

/** true: go on with the sign-in. Asks only on a terminal, with a deadline; anything but y/yes is no. */
export async function confirmReplace(io: HandlerIO, credential: string): Promise<boolean> {
  const { stdin, stderr } = io.ctx;
  if (!stdin.isTTY || !stderr.isTTY || io.out.json) {
    if (!io.out.json)
      io.out.info(
        `${credential}; signing in again replaces it (\`agyctl check --live\` shows whether it still works).`,
      );
    return true;
  }
  const rl = readline.createInterface({ input: stdin, output: stderr, terminal: true });
  try {
    const answer = new Promise<string>((resolve) => {
      rl.question(`${credential}.\nSign in again and replace it? [y/N] `, resolve);
      rl.on('close', () => resolve(''));
    });
    const text = await withDeadline(answer, { timeoutMs: ANSWER_MS, signal: io.ctx.signal, what: 'an answer' }).catch(
      (err: unknown) => {
        if (err instanceof TimeoutError) return ''; // no answer is no
        throw err;
      },
    );
    return /^\s*y(es)?\s*$/i.test(text);
  } finally {
    rl.close();
  }
}
