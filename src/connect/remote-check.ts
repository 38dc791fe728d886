/**
 * Fleet connect's first step on a host: `agyctl check --live --json` there,
 * over the host's control master, to skip hosts that are already healthy.
 * Like the remote login it runs through a wrapper that prints its pid, so a
 * Ctrl-C can stop the remote check (and the server it started) by pid:
 * sshd does not signal a command without a terminal when the client leaves.
 */
import { execa } from 'execa';
import { registerGroup, unregisterGroup } from '../acp/children.js';
import { serverText } from '../acp/redact.js';
import { type SshMaster, settlesWithin } from './control-master.js';
import { PID_MARKER, shellQuote } from './remote-command.js';

export interface RemoteCheck {
  /** The remote agyctl's exit code; null when ssh or the deadline ended it. */
  exit: number | null;
  /** The check's status (ok, not-authenticated, ...) when it printed its document. */
  status: string | undefined;
  /** The live check's own duration (mostly the server's start-up), when it ran. */
  liveMs: number | null;
  /** Its failed checks' messages, for the summary (redacted, one line each, like every remote string here). */
  findings: string[];
  /** The last lines of its stderr, redacted and without control characters. */
  stderr: string;
  interrupted: boolean;
  timedOut: boolean;
  /** ms since the epoch when it started, and how long it took. */
  startedAt: number;
  ms: number;
}

/** The remote check's own --timeout; our deadline adds a margin for its cleanup and ssh. */
export const REMOTE_CHECK_TIMEOUT = '60s';
const LOCAL_DEADLINE_MS = 75_000;
const CANCEL_WAIT_MS = 15_000;
const PID_WAIT_MS = 3_000;

export function remoteCheckCommand(remoteAgyctl: string): string {
  const args = ['check', '--live', '--json', '--timeout', REMOTE_CHECK_TIMEOUT];
  const script = `echo ${PID_MARKER} $$ >&2; exec ${remoteAgyctl} ${args.map(shellQuote).join(' ')}`;
  return `sh -c ${shellQuote(script)}`;
}

export async function runRemoteCheck(
  master: SshMaster,
  remoteAgyctl: string,
  signal: AbortSignal,
): Promise<RemoteCheck> {
  const startedAt = Date.now();
  const child = execa(
    'ssh',
    [...master.clientArgs(), '-T', '--', master.destination, remoteCheckCommand(remoteAgyctl)],
    {
      env: master.options.env,
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
      timeout: LOCAL_DEADLINE_MS,
      detached: true, // a terminal Ctrl-C reaches agyctl only; we stop the remote side properly
    },
  );
  const pid = child.pid;
  if (pid) registerGroup(pid);
  let remotePid: number | undefined;
  let seen = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (remotePid !== undefined) return;
    seen += chunk.toString();
    const m = new RegExp(`${PID_MARKER} (\\d+)`).exec(seen);
    if (m) remotePid = Number(m[1]);
  });
  let interrupted = false;
  const onAbort = (): void => {
    interrupted = true;
    void cancelRemote(master, () => remotePid, child).catch(() => undefined);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  const r = await child;
  signal.removeEventListener('abort', onAbort);
  if (pid) unregisterGroup(pid);
  const stderr = String(r.stderr ?? '');
  const doc = parseDocument(String(r.stdout ?? ''));
  const live = doc?.checks?.find((c) => c.id === 'live');
  // Everything below comes from the remote box: redacted and stripped of control characters before it is kept.
  const findings = (doc?.checks ?? [])
    .filter((c) => c.ok === false && c.severity === 'error')
    .map((c) => remoteLine(`${String(c.id)}: ${String(c.message)}`));
  return {
    exit: typeof r.exitCode === 'number' ? r.exitCode : null,
    status: typeof doc?.status === 'string' ? remoteStatus(doc.status) : undefined,
    findings,
    liveMs: typeof live?.ms === 'number' ? live.ms : null,
    stderr: stderr
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith(PID_MARKER))
      .slice(-4)
      .map(remoteLine)
      .join('\n'),
    interrupted,
    timedOut: Boolean(r.timedOut),
    startedAt,
    ms: Date.now() - startedAt,
  };
}

/** SIGTERM the remote agyctl by the pid its wrapper printed (it stops its server and exits 130), then make sure ssh ends. */
async function cancelRemote(
  master: SshMaster,
  remotePid: () => number | undefined,
  child: { kill(signal?: NodeJS.Signals): boolean } & Promise<unknown>,
): Promise<void> {
  const deadline = Date.now() + PID_WAIT_MS;
  while (remotePid() === undefined && Date.now() < deadline && !(await settlesWithin(child, 100)));
  const pid = remotePid();
  if (pid !== undefined) await master.runRemote(`kill -TERM ${pid}`);
  if (!(await settlesWithin(child, CANCEL_WAIT_MS))) child.kill('SIGKILL');
}

const MAX_REMOTE_LINE = 500;

const remoteLine = (text: string): string => serverText(text, { singleLine: true }).slice(0, MAX_REMOTE_LINE);

/** A check status is a word (ok, not-authenticated, ...); anything else is shown as what it is not. */
const remoteStatus = (status: string): string => {
  const word = remoteLine(status);
  return /^[a-z][a-z-]{0,40}$/.test(word) ? word : 'unrecognised';
};

interface CheckDocument {
  status?: unknown;
  checks?: Array<{ id?: unknown; ok?: unknown; severity?: unknown; message?: unknown; ms?: unknown }>;
}

function parseDocument(stdout: string): CheckDocument | undefined {
  try {
    const doc: unknown = JSON.parse(stdout);
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as CheckDocument) : undefined;
  } catch {
    return undefined;
  }
}
