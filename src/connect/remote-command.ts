/**
 * What connect asks ssh to do: validated destination and -o options, and
 * the one command string the remote login shell runs. ssh joins its command
 * arguments with spaces and hands them to the remote user's shell, so the
 * string is built here with POSIX quoting, never by concatenating raw input.
 */
import { AgyError, EXIT, usageError } from '../core/errors.js';
import { ORPHAN_GRACE_VAR } from '../login/events.js';
import { shellQuote } from '../util/shell-quote.js';
import { sanitizeForTerminal } from '../util/terminal-text.js';

/** How long a remote login outlives its lost SSH session with no one asking after it (connect's reconnect asks). */
const ORPHAN_GRACE = '2min';

/** The remote wrapper prints this before it execs agyctl, so a cancel can signal the right process. */
export const PID_MARKER = 'agyctl-connect-remote-pid';

/** A user name as ssh and useradd take it. */
const USER = '[A-Za-z0-9._][A-Za-z0-9._-]*';
/** A host name, an IPv4 address or an ssh_config alias (never starting with `-`), or an IPv6 address, bare or in brackets. */
const HOST = '[A-Za-z0-9_][A-Za-z0-9._-]*|\\[?[0-9A-Fa-f:.]*:[0-9A-Fa-f:.%A-Za-z]*\\]?';
const DESTINATION = new RegExp(`^(?:${USER}@)?(?:${HOST})$`);

/**
 * [USER@]HOST or an ssh_config alias, in characters a shell takes as they are:
 * never something ssh would parse as an option, and nothing (`$()`, `;`, quotes,
 * backticks, spaces) that could do more than name a host in a command we print to paste.
 */
export function validateDestination(text: string): string {
  const dest = text.trim();
  if (!DESTINATION.test(dest)) {
    throw new AgyError(
      EXIT.usage,
      'unsafe-destination',
      `The destination must look like host or user@host, in letters, digits and . _ - (got ${sanitizeForTerminal(JSON.stringify(text))}).`,
      {
        hint: 'pass ssh settings such as the port with --ssh-option Port=2222, or name a Host alias from ~/.ssh/config',
      },
    );
  }
  return dest;
}

/** --ssh-option values are ssh_config lines: `Key=value` or `Key value`. */
export function validateSshOption(text: string): string {
  const opt = text.trim();
  if (!/^[A-Za-z][A-Za-z0-9]*(?:\s*=\s*|\s+)\S/.test(opt)) {
    throw usageError(`--ssh-option takes an ssh_config setting like ConnectTimeout=10 (got ${JSON.stringify(text)}).`);
  }
  return opt;
}

export { shellQuote };

export interface RemoteLoginArgs {
  /** How to run agyctl on the remote box: a shell command prefix, e.g. `agyctl` or `env HOME=/x node /opt/agyctl/bin/agyctl.js`. */
  remoteAgyctl: string;
  method: string | undefined;
  timeout: string | undefined;
}

/**
 * `sh -c '<script>'`: sh whatever the user's login shell is, so `$$`, `exec`
 * and `>&2` mean what we expect. `$$` is the pid agyctl keeps after exec.
 */
export function remoteLoginCommand(args: RemoteLoginArgs): string {
  const login = ['login', '--json'];
  if (args.method !== undefined) login.push('--method', args.method);
  if (args.timeout !== undefined) login.push('--timeout', args.timeout);
  // A login whose SSH session went (connect killed with its ssh) cancels itself after this grace, unless
  // connect reconnects and asks after it; an older remote agyctl ignores the variable.
  const grace = `${ORPHAN_GRACE_VAR}=\${${ORPHAN_GRACE_VAR}:-${ORPHAN_GRACE}}; export ${ORPHAN_GRACE_VAR}`;
  const script = `echo ${PID_MARKER} $$ >&2; ${grace}; exec ${args.remoteAgyctl} ${login.map(shellQuote).join(' ')}`;
  return `sh -c ${shellQuote(script)}`;
}
