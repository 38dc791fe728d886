/**
 * One capture pipeline that every channel feeds: the launcher shims' log
 * (and the local files launchers are handed), the server's stdout noise and
 * stderr lines (raw, so hyperlinks and split URLs are found), its
 * JSON-RPC messages, and ACP URL elicitations (elicitation-source.ts). The
 * first valid sign-in URL resolves `found`; every other candidate is kept
 * as evidence and handed to `onRejected`.
 */
import fs from 'node:fs';
import type { JsonRpcMessage } from '../../acp/framing.js';
import {
  type AuthUrl,
  looksLikeSignInUrl,
  type Validation,
  validateAuthUrl,
  validateCodeEntryUrl,
  validateElicitedUrl,
} from '../../profiles/auth-url.js';
import type { ShimDir } from '../shims.js';
import { type Candidate, type Channel, EvidenceLog, redactEvidence, shorten } from './evidence.js';
import {
  type FileArgument,
  type FileKind,
  fileArgument,
  LauncherFiles,
  type LauncherRun,
  launcherUrls,
  noUrlReason,
  parseLauncherLog,
} from './launcher-source.js';
import { type MessageInfo, messageUrls } from './rpc-source.js';
import {
  type JoinedUrl,
  LineJoin,
  terminalUrls,
  trailingUrl,
  unframed,
  visibleText,
  withoutTrailingPunctuation,
} from './text-source.js';

export interface CapturedUrl {
  auth: AuthUrl;
  source: Channel;
  /** Which launcher (xdg-open, gio, BROWSER, ...) for 'shim' and 'launcher-file'; which message and field for 'rpc'. */
  via: string | undefined;
  /** The launcher's arguments, redacted ('shim', 'launcher-file'). */
  args: string[] | undefined;
  /** The kind of file the launcher was handed ('launcher-file' only). */
  file: { kind: FileKind } | undefined;
  /** The elicitation's id and the agent's message, sanitised and redacted ('elicitation' only). */
  elicitation?: ElicitationInfo | undefined;
  capturedAt: number;
  /**
   * loopback: the browser comes back to the server's listener. code-entry: the user pastes a code the server reads
   * on stdin (auth.port is 0). device: a device-code or verification page the server follows itself (elicitation
   * only; auth.port is 0, nothing to tunnel or paste).
   */
  kind: 'loopback' | 'code-entry' | 'device';
}

export interface ElicitationInfo {
  id: string;
  message: string;
  /** The JSON-RPC id of the agent's `elicitation/create`: a `$/cancel_request` naming it withdraws the URL. */
  requestId?: string | number | null;
}

/** A rejected candidate, and whether it deserves a warning (it looked like a sign-in) or only --verbose. */
export type RejectedHandler = (c: Candidate, loud: boolean) => void;

/** inotify is the fast path; this slow poll only guards filesystems where watching fails. */
const FALLBACK_POLL_MS = 500;
/** OAuth-looking parameters: a URL with them is meant as a sign-in even on another host. */
const OAUTH_PARAMS = /[?&](response_type|redirect_uri|client_id|code_challenge)=/;

/** Why a candidate was not taken, and whether it was reported before; undefined when it was taken (or capture is over). */
type Rejection = { reason: string; repeat: boolean } | undefined;
/** Where a candidate came from, beyond its channel. */
type From = Pick<Candidate, 'via' | 'args' | 'file'> & { elicitation?: ElicitationInfo };

/** What a joined URL still held when the capture ended is recorded with. */
function endedRejection(url: string): Rejection {
  const v = validateAuthUrl(url);
  return { reason: v.ok ? 'not used: the capture ended first' : v.reason, repeat: false };
}

/** The shim for BROWSER reports as "BROWSER", so evidence says what the server ran. */
const programName = (name: string): string => (name === 'agyctl-browser' ? 'BROWSER' : name);

export class UrlCapture {
  readonly found: Promise<CapturedUrl>;
  private readonly log = new EvidenceLog();
  private resolve!: (c: CapturedUrl) => void;
  private done = false;
  private offset = 0;
  private watcher: fs.FSWatcher | undefined;
  private readonly poll: NodeJS.Timeout;
  /** Every candidate judged so far, with why it was not taken. */
  private readonly judged = new Map<string, string>();
  private readonly files = new LauncherFiles();
  private readonly joins: Record<'stdout' | 'stderr', LineJoin> = {
    stdout: new LineJoin((j) => this.settleJoin(j, 'stdout')),
    stderr: new LineJoin((j) => this.settleJoin(j, 'stderr')),
  };

  constructor(
    private readonly shims: ShimDir,
    private readonly onRejected: RejectedHandler,
    /** Accept a code-entry URL from stdout (profiles with that fallback). */
    private readonly codeEntry = false,
  ) {
    this.found = new Promise((r) => (this.resolve = r));
    try {
      this.watcher = fs.watch(shims.log, () => this.readLog());
      this.watcher.on('error', () => undefined);
    } catch {
      this.watcher = undefined;
    }
    this.poll = setInterval(() => this.readLog(), FALLBACK_POLL_MS);
    this.poll.unref();
  }

  /** A line of server output (stdout noise or stderr); `raw` still has its escape sequences. */
  feedLine(line: string, source: 'stdout' | 'stderr', raw: string = line): void {
    if (this.done) return;
    const visible = unframed(visibleText(raw));
    const join = this.joins[source];
    if (join.feed(visible)) return;
    const trailing = trailingUrl(visible);
    for (const url of terminalUrls(raw)) {
      const v = this.judge(url, source, {});
      if (v === undefined) continue;
      // A URL that ends its line and fails may be only the first piece of one.
      if (trailing !== undefined && url === withoutTrailingPunctuation(trailing))
        join.hold(trailing, v.reason, v.repeat);
      else if (!v.repeat) this.rejectUrl(url, source, {}, v.reason);
    }
  }

  /** What the capture saw and did not use (held pieces of a split URL are judged first). */
  get evidence(): EvidenceLog {
    for (const j of Object.values(this.joins)) j.settle();
    return this.log;
  }

  /** A JSON-RPC message from the server, as Connection.onServerMessage delivers it. */
  feedMessage(msg: JsonRpcMessage, info: MessageInfo): void {
    if (this.done) return;
    // A URL elicitation is its own channel (feedElicitation), answered by the sign-in's request handler.
    if (msg.method === 'elicitation/create' && msg.id !== undefined && msg.id !== null) return;
    for (const { url, where } of messageUrls(msg, info)) this.consider(url, 'rpc', { via: where });
  }

  /**
   * The URL of an ACP URL elicitation tied to our authenticate. It is judged whether or not the capture has ended
   * (the answer to the agent depends on it); it is taken only when nothing was taken before.
   */
  feedElicitation(url: string, info: ElicitationInfo): Validation<CapturedUrl['kind']> {
    const from: From = { via: info.id, elicitation: info };
    const v = validateElicitedUrl(url);
    if (!v.ok) {
      if (!this.judged.has(url)) this.rejectUrl(url, 'elicitation', from, v.reason);
      this.judged.set(url, v.reason);
      return v;
    }
    if (!this.done) {
      this.close();
      this.resolve({ auth: v.value.auth, source: 'elicitation', ...this.fromFields(from), kind: v.value.kind });
    }
    return { ok: true, value: v.value.kind };
  }

  private fromFields(from: From): Pick<CapturedUrl, 'via' | 'args' | 'file' | 'elicitation' | 'capturedAt'> {
    return { via: from.via, args: from.args, file: from.file, elicitation: from.elicitation, capturedAt: Date.now() };
  }

  /** Read the launcher log now (tests; the watcher does it otherwise). */
  flushLog(): void {
    this.readLog();
  }

  close(): void {
    const wasDone = this.done;
    this.done = true;
    for (const [source, j] of Object.entries(this.joins)) {
      const held = j.close();
      if (held && !held.repeat && !wasDone) this.settleJoin(held, source as 'stdout' | 'stderr', true);
    }
    this.watcher?.close();
    clearInterval(this.poll);
  }

  private readLog(): void {
    if (this.done) return;
    let text: string;
    try {
      const buf = fs.readFileSync(this.shims.log);
      text = buf.subarray(this.offset).toString('utf8');
      const lastNl = text.lastIndexOf('\n');
      if (lastNl < 0) return;
      text = text.slice(0, lastNl);
      this.offset += Buffer.byteLength(text) + 1;
    } catch {
      return;
    }
    for (const run of parseLauncherLog(text)) this.considerRun(run);
  }

  private considerRun(run: LauncherRun): void {
    const via = programName(run.program);
    const args = run.args.map((a) => shorten(redactEvidence(a)));
    const urls = launcherUrls(run);
    const files = run.args.map(fileArgument).filter((f) => f !== undefined);
    if (urls.length === 0 && files.length === 0)
      this.reject({ channel: 'shim', via, args, reason: noUrlReason(run) }, false);
    for (const url of urls) this.consider(url, 'shim', { via, args });
    for (const f of files) this.considerFile(f, { via, args });
  }

  /** A local file a launcher was handed: what it leads to is judged like any candidate; a file that leads nowhere is evidence. */
  private considerFile(f: FileArgument, from: From): void {
    if (this.done) return;
    if ('refused' in f) {
      this.reject({ channel: 'launcher-file', ...from, reason: f.refused }, false);
      return;
    }
    const reading = this.files.read(f.path);
    if (reading === undefined) return;
    const withKind: From = reading.kind ? { ...from, file: { kind: reading.kind } } : from;
    if (reading.urls.length === 0)
      this.reject({ channel: 'launcher-file', ...withKind, reason: reading.reason ?? 'no URL in it' }, false);
    for (const url of reading.urls) this.consider(url, 'launcher-file', withKind);
  }

  private consider(url: string, source: Channel, from: From): void {
    const v = this.judge(url, source, from);
    if (v && !v.repeat) this.rejectUrl(url, source, from, v.reason);
  }

  /**
   * A held piece of a split URL, or the pieces joined: the whole is validated like any candidate. When the
   * capture has ended (another channel won, or it stopped) it is evidence only, never taken.
   */
  private settleJoin(j: JoinedUrl, source: 'stdout' | 'stderr', ended = false): void {
    const url = withoutTrailingPunctuation(j.text);
    if (j.lines === 1) {
      if (!j.repeat) this.rejectUrl(url, source, {}, j.reason);
      return;
    }
    const v = ended ? endedRejection(url) : this.judge(url, source, {});
    if (v && !v.repeat) this.rejectUrl(url, source, {}, `${v.reason} (joined from ${j.lines} lines)`);
  }

  private judge(url: string, source: Channel, from: From): Rejection {
    if (this.done) return undefined;
    const before = this.judged.get(url);
    if (before !== undefined) return { reason: before, repeat: true };
    const v = validateAuthUrl(url);
    const code = !v.ok && this.codeEntry && source === 'stdout' ? validateCodeEntryUrl(url) : undefined;
    if (v.ok || code?.ok) {
      this.close();
      const auth = v.ok ? v.value : (code as { value: AuthUrl }).value;
      this.resolve({ auth, source, ...this.fromFields(from), kind: v.ok ? 'loopback' : 'code-entry' });
      return undefined;
    }
    this.judged.set(url, v.reason);
    return { reason: v.reason, repeat: false };
  }

  private rejectUrl(url: string, source: Channel, from: From, reason: string): void {
    // Anything a launcher got (or a file it got leads to) is meant as the sign-in URL; from output and messages, only Google- or OAuth-looking ones are worth a warning.
    const loud =
      source === 'shim' ||
      source === 'launcher-file' ||
      source === 'elicitation' ||
      looksLikeSignInUrl(url) ||
      OAUTH_PARAMS.test(url);
    this.reject({ channel: source, ...from, url: shorten(redactEvidence(url)), reason }, loud);
  }

  private reject(c: Candidate, loud: boolean): void {
    this.log.add(c);
    this.onRejected(c, loud);
  }
}
