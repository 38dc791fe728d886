/**
 * agyctl login: headless OAuth sign-in with URL capture, the exact tunnel
 * command, paste-back and proof; and `login status | finish | cancel` for
 * a login that outlives its terminal (docs/login.md); and the hidden
 * `__login-supervisor --record DIR`, the process a login runs in: it reads
 * the login's options from DIR/request.json, runs the ordinary login
 * (src/login/run-login.ts) with its events streamed to attached clients,
 * and records the outcome. Started only by src/login/supervisor.ts, in its
 * own session.
 */
import type { Command } from 'commander';
import type { ActionFactory } from '../../action.js';
import type { LoginStatusFlags, NoFlags } from './detached-handler.js';
import type { LoginFlags } from './handler.js';
import type { SupervisorFlags } from './supervisor-handler.js';

/** As root on a user's state dir, login's subcommands get root's stdin as a login does (`finish` reads the address there). */
const readsStdinAsOwner = { asOwner: () => ({ withStdin: true }) };

export function register(program: Command, action: ActionFactory): void {
  const login = program
    .command('login')
    .description(
      'sign the server in on a headless box: prints the sign-in URL and the SSH tunnel command, waits, then proves the token survives a restart',
    )
    .option('--method <id>', 'auth method (default: settings.json auth.type, else oauth-personal)')
    .option('--timeout <duration>', 'how long to wait for the sign-in', '10m')
    .option(
      '--ssh-target <[user@]host[:port]>',
      'the host name your laptop uses to reach this box, for the tunnel command',
    )
    .option(
      '--qr',
      "also show the URL as a QR code (sign in from a phone, then paste the address it ends on); Google's sign-in URL needs a terminal of about 83×60, smaller ones get a note instead",
    )
    .option('--open', 'open the URL in a browser on this machine (needs a display)')
    .option('--keep-probe-session', 'keep the conversation the proof creates')
    .option('--no-fake-display', 'do not give the server a placeholder DISPLAY')
    .option('--proof-timeout <duration>', 'deadline for the fresh server in the proof', '60s')
    .option(
      '--detach',
      'print the URL and tunnel, then leave the login running in the background (finish with `agyctl login finish`)',
    )
    .option('--restart', 'cancel a pending login of this state dir and start a new one')
    .option('--force', 'sign in again without asking when the state dir already holds a credential `check` accepts')
    .action(
      action<LoginFlags>(async (io, input) => (await import('./handler.js')).loginCommand(io, input), {
        streaming: true,
        // --detach reads nothing: it leaves as soon as the login waits for the browser.
        asOwner: ({ options }) => ({ withStdin: options.detach !== true }),
      }),
    );
  login
    .command('status')
    .description('the pending login of this state dir (URL, tunnel, time left, port), or how the last one ended')
    .option('--wait', "block until the login ends, then exit with the login's own exit code")
    .action(
      action<LoginStatusFlags>(
        async (io, input) => (await import('./detached-handler.js')).statusCommand(io, input),
        readsStdinAsOwner,
      ),
    );
  login
    .command('finish')
    .description(
      'deliver the whole address your browser ended on (a bare code only for a code-entry login) to the pending login; from the argument or stdin',
    )
    .argument('[url]', 'the redirect address (prefer stdin: arguments are visible to other users in ps)')
    .action(
      action<NoFlags>(
        async (io, input) => (await import('./detached-handler.js')).finishCommand(io, input),
        readsStdinAsOwner,
      ),
    );
  login
    .command('cancel')
    .description('stop the pending login: its server, listener and shim directory go away')
    .action(action(async (io) => (await import('./detached-handler.js')).loginCancel(io), readsStdinAsOwner));
  program
    .command('__login-supervisor', { hidden: true })
    .description('internal: runs a login for `agyctl login`')
    .requiredOption('--record <dir>', 'the login record directory')
    .action(
      action<SupervisorFlags>(
        async (io, input) => (await import('./supervisor-handler.js')).supervisorCommand(io, input),
        { streaming: true },
      ),
    );
}
