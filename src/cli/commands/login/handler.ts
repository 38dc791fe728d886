/**
 * `agyctl login`: flags -> the login's options (one type, checked once), the question before a
 * credential `check` accepts is replaced, then the login started under its supervisor
 * (src/login/client.ts).
 */

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { describeInsight, inspectToken } from '../../../check/token.js';
import { EXIT, TimeoutError, usageError } from '../../../core/errors.js';
import type { TtyReadable } from '../../../core/io.js';
import { resolveUserPath } from '../../../core/paths.js';
import type { LoginOptions } from '../../../login/run-login.js';
import { profileOf } from '../../../profiles/index.js';
import { withDeadline } from '../../../util/deadline.js';
import type { CommandResult, HandlerArgs, HandlerIO } from '../../action.js';

/** `agyctl login`'s own flags, as commander produces them. */
export interface LoginFlags {
  method: string | undefined;
  timeout: string;
  sshTarget: string | undefined;
  qr: boolean | undefined;
  open: boolean | undefined;
  keepProbeSession: boolean | undefined;
  /** `--no-fake-display` makes it false. */
  fakeDisplay: boolean;
  proofTimeout: string;
  detach: boolean | undefined;
  restart: boolean | undefined;
  force: boolean | undefined;
}

/** The flags, checked once, as the login's options (usage errors exit 2 naming the fix). */
async function loginOptionsFrom(io: HandlerIO, flags: LoginFlags): Promise<LoginOptions> {
  const { parseDurationOption } = await import('../../parse-options.js');
  const { parseSshTarget, defaultTunnelTarget } = await import('../../../login/present.js');
  let explicit: ReturnType<typeof parseSshTarget> | undefined;
  if (flags.sshTarget !== undefined) {
    explicit = parseSshTarget(flags.sshTarget);
    if (!explicit)
      throw usageError(
        `--ssh-target must look like host, user@host or user@host:port (got ${JSON.stringify(flags.sshTarget)}).`,
      );
  }
  if (flags.method !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(flags.method))
    throw usageError(`--method must be an auth method id like oauth-personal (got ${JSON.stringify(flags.method)}).`);
  return {
    method: flags.method,
    timeoutMs: parseDurationOption('--timeout', flags.timeout),
    proofTimeoutMs: parseDurationOption('--proof-timeout', flags.proofTimeout),
    target: defaultTunnelTarget(io.ctx.env, explicit),
    qr: flags.qr === true,
    open: flags.open === true,
    fakeDisplay: flags.fakeDisplay !== false,
    keepProbeSession: flags.keepProbeSession === true,
    detached: flags.detach === true,
    stdinPastes: stdinCanPaste(io.ctx.stdin),
    restart: flags.restart === true,
    force: flags.force === true,
  };
}

/** A terminal or a pipe can bring a pasted address; `</dev/null` (a character device that is no terminal) cannot. */
function stdinCanPaste(stdin: TtyReadable): boolean {
  if (stdin.isTTY) return true;
  const fd = (stdin as { fd?: unknown }).fd;
  if (typeof fd !== 'number') return true;
  try {
    return !fs.fstatSync(fd).isCharacterDevice();
  } catch {
    return false; // a closed stdin
  }
}

export async function loginCommand(io: HandlerIO, { options }: HandlerArgs<LoginFlags>): Promise<CommandResult> {
  const { startLogin, outcomeError } = await import('../../../login/client.js');
  const { detachedEvent, loginPrinter, pasteWhere } = await import('./printers.js');
  const login = await loginOptionsFrom(io, options);
  // A settings.json login would refuse is refused first, before anything is said about the credential.
  (await import('../../../login/run-login.js')).usableSettings(io);
  if (!login.force) {
    const credential = acceptedCredential(io);
    if (credential && !(await confirmReplace(io, credential))) {
      io.out.print('Nothing changed: the credential stays. (`agyctl login --force` signs in again without asking.)');
      return { exit: EXIT.ok, data: { started: false } };
    }
  }
  // The supervisor runs the login with these options (how it is shown stays here); --trace is made absolute, it runs elsewhere.
  const { json: _json, color: _color, verbose: _verbose, ...target } = io.opts;
  const opts = {
    ...target,
    ...(io.opts.trace ? { trace: resolveUserPath(io.ctx.cwd, io.opts.trace, io.ctx.env) } : {}),
  };
  const printer = loginPrinter(io.out, { qr: login.qr, pasteWhere: pasteWhere(login), stderr: io.ctx.stderr });
  const result = await startLogin(io, { opts, login }, printer);
  if (result.kind === 'hangup') return { exit: EXIT.ok, data: { detached: true } };
  if (result.kind === 'detached') {
    await printer.show(detachedEvent(result.state));
    return { exit: EXIT.ok, data: { detached: true } };
  }
  if (result.outcome.exit !== EXIT.ok) throw outcomeError(result.outcome);
  return { exit: EXIT.ok };
}

// --- before a login replaces a credential that `check` accepts ---
// Say so, and on a terminal ask (no by default); `--force` signs in again without asking.
// Without a terminal (scripts, `connect`'s remote login, which runs only after a failing
// live check) the login goes on after saying so, since a credential the static check
// accepts may still be refused by the server.

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
  // Readline's line editor writes escape sequences; without them the terminal's own line editing reads the answer.
  const rl = readline.createInterface({ input: stdin, output: stderr, terminal: io.out.stderrEscapes });
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
