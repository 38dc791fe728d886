/** agyctl login: headless OAuth sign-in with URL capture, the exact tunnel command, paste-back and proof. */
import type { Command } from 'commander';
import type { ActionFactory } from '../action.js';
import { EXIT, usageError } from '../../errors.js';

export function register(program: Command, action: ActionFactory): void {
  program
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
    .action(
      action(
        async (io, { options }) => {
          const { parseDurationOption } = await import('../parse-options.js');
          const { parseSshTarget, defaultTunnelTarget } = await import('../../login/tunnel.js');
          const { runLogin } = await import('../../login/run-login.js');
          let explicit;
          if (options.sshTarget !== undefined) {
            explicit = parseSshTarget(String(options.sshTarget));
            if (!explicit) throw usageError(`--ssh-target must look like host, user@host or user@host:port (got ${JSON.stringify(options.sshTarget)}).`);
          }
          const method = options.method === undefined ? undefined : String(options.method);
          if (method !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(method)) throw usageError(`--method must be an auth method id like oauth-personal (got ${JSON.stringify(method)}).`);
          const report = await runLogin(io, {
            method,
            timeoutMs: parseDurationOption('--timeout', String(options.timeout)),
            proofTimeoutMs: parseDurationOption('--proof-timeout', String(options.proofTimeout)),
            target: defaultTunnelTarget(io.ctx.env, explicit),
            qr: Boolean(options.qr),
            open: Boolean(options.open),
            fakeDisplay: options.fakeDisplay !== false,
            keepProbeSession: Boolean(options.keepProbeSession),
          });
          if (!io.opts.json) {
            io.out.print(`Logged in with ${report.method}; a fresh server accepted the credentials (start-up ${report.proof.initMs} ms).`);
            if (report.tokenFile?.exists) io.out.print(`Token file: ${report.tokenFile.path} (mode ${report.tokenFile.mode}; contents never shown).`);
            if (options.keepProbeSession) io.out.print(`Probe session kept: ${report.proof.sessionId}`);
          }
          return { exit: EXIT.ok, data: { login: report } };
        },
        { streaming: true },
      ),
    );
}
