/** `agyctl login`: flags -> the login's options, started under its supervisor (src/login/detached/start.ts); the detach notice. */

import fs from 'node:fs';
import { EXIT, usageError } from '../../../core/errors.js';
import type { TtyReadable } from '../../../core/io.js';
import { emit } from '../../../login/detached/contract.js';
import type { LoginOptions } from '../../../login/run-login.js';
import type { HandlerArgs } from '../../action.js';
import type { CommandResult, HandlerIO } from '../../context.js';

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
async function loginOptionsFrom(io: HandlerIO, f: LoginFlags): Promise<LoginOptions> {
  const { parseDurationOption } = await import('../../parse-options.js');
  const { parseSshTarget, defaultTunnelTarget } = await import('../../../login/tunnel.js');
  let explicit: ReturnType<typeof parseSshTarget> | undefined;
  if (f.sshTarget !== undefined) {
    explicit = parseSshTarget(f.sshTarget);
    if (!explicit)
      throw usageError(
        `--ssh-target must look like host, user@host or user@host:port (got ${JSON.stringify(f.sshTarget)}).`,
      );
  }
  if (f.method !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(f.method))
    throw usageError(`--method must be an auth method id like oauth-personal (got ${JSON.stringify(f.method)}).`);
  return {
    method: f.method,
    timeoutMs: parseDurationOption('--timeout', f.timeout),
    proofTimeoutMs: parseDurationOption('--proof-timeout', f.proofTimeout),
    target: defaultTunnelTarget(io.ctx.env, explicit),
    qr: f.qr === true,
    open: f.open === true,
    fakeDisplay: f.fakeDisplay !== false,
    keepProbeSession: f.keepProbeSession === true,
    detached: f.detach === true,
    stdinPastes: stdinCanPaste(io.ctx.stdin),
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
  const { startLogin } = await import('../../../login/detached/start.js');
  const { outcomeError } = await import('../../../login/detached/relay.js');
  const login = await loginOptionsFrom(io, options);
  if (options.force !== true) {
    const { acceptedCredential, confirmReplace } = await import('./replace-check.js');
    const credential = acceptedCredential(io);
    if (credential && !(await confirmReplace(io, credential))) {
      io.out.print('Nothing changed: the credential stays. (`agyctl login --force` signs in again without asking.)');
      return { exit: EXIT.ok, data: { started: false } };
    }
  }
  // The supervisor runs the login with these options; --trace is made absolute, it runs elsewhere.
  const opts = {
    ...io.opts,
    ...(io.opts.trace ? { trace: (await import('node:path')).resolve(io.ctx.cwd, io.opts.trace) } : {}),
  };
  const { screenOf } = await import('../../../login/qr.js');
  const stderrSize = screenOf(io.ctx.stderr).size;
  const tty = { stdout: Boolean(io.ctx.stdout.isTTY), stderr: Boolean(io.ctx.stderr.isTTY) };
  const result = await startLogin(io, {
    request: { opts, login, tty: { ...tty, ...(stderrSize ? { stderrSize } : {}) } },
    restart: options.restart === true,
  });
  if (result.kind === 'hangup') return { exit: EXIT.ok, data: { detached: true } };
  if (result.kind === 'detached') {
    const s = result.state;
    emit(io.out, {
      event: 'detached',
      id: s.id,
      pid: s.pid,
      url: s.url ?? null,
      port: s.port ?? null,
      tunnel: s.tunnel ?? null,
      deadline: new Date(s.deadline).toISOString(),
    });
    if (!io.out.json) {
      io.out.info(
        `The login goes on in the background (supervisor pid ${s.pid}) until ${new Date(s.deadline).toISOString()}.`,
      );
      io.out.info(
        s.mode === 'device'
          ? 'Follow the page; the server sees the sign-in finish by itself. Then `agyctl login status --wait`. Stop it with `agyctl login cancel`.'
          : 'After signing in: `agyctl login finish` with the address your browser ended on (not needed when the tunnel carried it), then `agyctl login status --wait`. Stop it with `agyctl login cancel`.',
      );
    }
    return { exit: EXIT.ok, data: { detached: true } };
  }
  if (result.outcome.exit !== EXIT.ok) throw outcomeError(result.outcome);
  return { exit: EXIT.ok };
}
