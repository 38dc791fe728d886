/** `agyctl login`: flags -> the login's options, started under its supervisor (src/login/detached/start.ts); the detach notice. */

import { EXIT, usageError } from '../../../core/errors.js';
import type { HandlerArgs } from '../../action.js';
import type { CommandIO, CommandResult } from '../../context.js';

export async function loginCommand(io: CommandIO, { options }: HandlerArgs): Promise<CommandResult> {
  const { parseDurationOption } = await import('../../parse-options.js');
  const { parseSshTarget, defaultTunnelTarget } = await import('../../../login/tunnel.js');
  const { startLogin } = await import('../../../login/detached/start.js');
  const { outcomeError } = await import('../../../login/detached/relay.js');
  let explicit: ReturnType<typeof parseSshTarget> | undefined;
  if (options.sshTarget !== undefined) {
    explicit = parseSshTarget(String(options.sshTarget));
    if (!explicit)
      throw usageError(
        `--ssh-target must look like host, user@host or user@host:port (got ${JSON.stringify(options.sshTarget)}).`,
      );
  }
  const method = options.method === undefined ? undefined : String(options.method);
  if (method !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(method))
    throw usageError(`--method must be an auth method id like oauth-personal (got ${JSON.stringify(method)}).`);
  const loginOptions = {
    method,
    timeoutMs: parseDurationOption('--timeout', String(options.timeout)),
    proofTimeoutMs: parseDurationOption('--proof-timeout', String(options.proofTimeout)),
    target: defaultTunnelTarget(io.ctx.env, explicit),
    qr: Boolean(options.qr),
    open: Boolean(options.open),
    fakeDisplay: options.fakeDisplay !== false,
    keepProbeSession: Boolean(options.keepProbeSession),
    detached: Boolean(options.detach),
  };
  // The supervisor runs the login with these options; --trace is made absolute, it runs elsewhere.
  const opts = {
    ...io.opts,
    ...(io.opts.trace ? { trace: (await import('node:path')).resolve(io.ctx.cwd, io.opts.trace) } : {}),
  };
  const result = await startLogin(io, {
    request: {
      opts,
      login: loginOptions,
      tty: { stdout: Boolean(io.ctx.stdout.isTTY), stderr: Boolean(io.ctx.stderr.isTTY) },
    },
    method,
    timeoutMs: loginOptions.timeoutMs,
    proofTimeoutMs: loginOptions.proofTimeoutMs,
    detach: Boolean(options.detach),
    restart: Boolean(options.restart),
  });
  if (result.kind === 'hangup') return { exit: EXIT.ok, data: { detached: true } };
  if (result.kind === 'detached') {
    const s = result.state;
    io.out.event({
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
        'After signing in: `agyctl login finish` with the address your browser ended on (not needed when the tunnel carried it), then `agyctl login status --wait`. Stop it with `agyctl login cancel`.',
      );
    }
    return { exit: EXIT.ok, data: { detached: true } };
  }
  if (result.outcome.exit !== EXIT.ok) throw outcomeError(result.outcome);
  return { exit: EXIT.ok };
}
