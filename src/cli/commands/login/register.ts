/**
 * agyctl login: headless OAuth sign-in with URL capture, the exact tunnel
 * command, paste-back and proof; and `login status | finish | cancel` for
 * a login that outlives its terminal (docs/login.md).
 */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import { EXIT, usageError } from '../../../core/errors.js';

export function register(program: Command, action: ActionFactory): void {
  const login = program
    .command('login')
    .description('sign the server in on a headless box: prints the sign-in URL and the SSH tunnel command, waits, then proves the token survives a restart')
    .option('--method <id>', 'auth method (default: settings.json auth.type, else oauth-personal)')
    .option('--timeout <duration>', 'how long to wait for the sign-in', '10m')
    .option('--ssh-target <[user@]host[:port]>', 'the host name your laptop uses to reach this box, for the tunnel command')
    .option('--qr', 'also show the URL as a QR code (sign in from a phone, then paste the address it ends on)')
    .option('--open', 'open the URL in a browser on this machine (needs a display)')
    .option('--keep-probe-session', 'keep the conversation the proof creates')
    .option('--no-fake-display', 'do not give the server a placeholder DISPLAY')
    .option('--proof-timeout <duration>', 'deadline for the fresh server in the proof', '60s')
    .option('--detach', 'print the URL and tunnel, then leave the login running in the background (finish with `agyctl login finish`)')
    .option('--restart', 'cancel a pending login of this state dir and start a new one')
    .action(
      action(
        async (io, { options }) => {
          const { parseDurationOption } = await import('../../parse-options.js');
          const { parseSshTarget, defaultTunnelTarget } = await import('../../../login/tunnel.js');
          const { startLogin } = await import('../../../login/detached/start.js');
          const { outcomeError } = await import('../../../login/detached/relay.js');
          let explicit;
          if (options.sshTarget !== undefined) {
            explicit = parseSshTarget(String(options.sshTarget));
            if (!explicit) throw usageError(`--ssh-target must look like host, user@host or user@host:port (got ${JSON.stringify(options.sshTarget)}).`);
          }
          const method = options.method === undefined ? undefined : String(options.method);
          if (method !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(method)) throw usageError(`--method must be an auth method id like oauth-personal (got ${JSON.stringify(method)}).`);
          const loginOptions = {
            method,
            timeoutMs: parseDurationOption('--timeout', String(options.timeout)),
            proofTimeoutMs: parseDurationOption('--proof-timeout', String(options.proofTimeout)),
            target: defaultTunnelTarget(io.ctx.env, explicit),
            qr: Boolean(options.qr),
            open: Boolean(options.open),
            fakeDisplay: options.fakeDisplay !== false,
            keepProbeSession: Boolean(options.keepProbeSession),
          };
          // The supervisor runs the login with these options; --trace is made absolute, it runs elsewhere.
          const opts = { ...io.opts, ...(io.opts.trace ? { trace: (await import('node:path')).resolve(io.ctx.cwd, io.opts.trace) } : {}) };
          const result = await startLogin(io, {
            request: { opts, login: loginOptions, tty: { stdout: Boolean(io.ctx.stdout.isTTY), stderr: Boolean(io.ctx.stderr.isTTY) } },
            method,
            timeoutMs: loginOptions.timeoutMs,
            proofTimeoutMs: loginOptions.proofTimeoutMs,
            detach: Boolean(options.detach),
            restart: Boolean(options.restart),
          });
          if (result.kind === 'hangup') return { exit: EXIT.ok, data: { detached: true } };
          if (result.kind === 'detached') {
            const s = result.state;
            io.out.event({ event: 'detached', id: s.id, pid: s.pid, url: s.url ?? null, port: s.port ?? null, tunnel: s.tunnel ?? null, deadline: new Date(s.deadline).toISOString() });
            if (!io.out.json) {
              io.out.info(`The login goes on in the background (supervisor pid ${s.pid}) until ${new Date(s.deadline).toISOString()}.`);
              io.out.info('After signing in: `agyctl login finish` with the address your browser ended on (not needed when the tunnel carried it), then `agyctl login status --wait`. Stop it with `agyctl login cancel`.');
            }
            return { exit: EXIT.ok, data: { detached: true } };
          }
          if (result.outcome.exit !== EXIT.ok) throw outcomeError(result.outcome);
          return { exit: EXIT.ok };
        },
        { streaming: true },
      ),
    );
  login
    .command('status')
    .description('the pending login of this state dir (URL, tunnel, time left, port), or how the last one ended')
    .option('--wait', "block until the login ends, then exit with the login's own exit code")
    .action(
      action(async (io, { options }) => {
        const { loginStatus } = await import('./detached-handler.js');
        return loginStatus(io, { wait: Boolean(options.wait) });
      }),
    );
  login
    .command('finish')
    .description('deliver the address your browser ended on (or a code) to the pending login; from the argument or stdin')
    .argument('[url]', 'the redirect address (prefer stdin: arguments are visible to other users in ps)')
    .action(
      action(async (io, { args }) => {
        const { loginFinish } = await import('./detached-handler.js');
        return loginFinish(io, args[0] === undefined ? undefined : String(args[0]));
      }),
    );
  login
    .command('cancel')
    .description('stop the pending login: its server, listener and shim directory go away')
    .action(
      action(async (io) => {
        const { loginCancel } = await import('./detached-handler.js');
        return loginCancel(io);
      }),
    );
}
