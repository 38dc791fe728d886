/**
 * One capture pipeline that every channel feeds: the launcher shims' log,
 * the server's stdout noise and stderr lines (raw, so hyperlinks and split
 * URLs are found), and its JSON-RPC messages. The first valid sign-in URL
 * resolves `found`; every other candidate is kept as evidence and handed to
 * `onRejected`.
 */
import fs from 'node:fs';
import type { JsonRpcMessage } from '../../acp/framing.js';
import { type AuthUrl, looksLikeSignInUrl, validateAuthUrl, validateCodeEntryUrl } from '../../profiles/auth-url.js';
import type { ShimDir } from '../shims.js';
import { type Candidate, type Channel, EvidenceLog, redactEvidence, shorten } from './evidence.js';
import { type LauncherRun, launcherUrls, noUrlReason, parseLauncherLog } from './launcher-source.js';
import { type MessageInfo, messageUrls } from './rpc-source.js';
import { terminalUrls } from './text-source.js';

export type UrlSource = Channel;

export interface CapturedUrl {
  auth: AuthUrl;
  source: UrlSource;
  /** Which launcher (xdg-open, gio, BROWSER, ...) for 'shim'; which message and field for 'rpc'. */
  via: string | undefined;
  /** The launcher's arguments, redacted ('shim' only). */
  args: string[] | undefined;
  capturedAt: number;
  /** loopback: the browser comes back to the server's listener. code-entry: the user pastes a code the server reads on stdin (auth.port is 0). */
  kind: 'loopback' | 'code-entry';
}

/** A rejected candidate, and whether it deserves a warning (it looked like a sign-in) or only --verbose. */
export type RejectedHandler = (c: Candidate, loud: boolean) => void;

/** inotify is the fast path; this slow poll only guards filesystems where watching fails. */
const FALLBACK_POLL_MS = 500;
/** OAuth-looking parameters: a URL with them is meant as a sign-in even on another host. */
const OAUTH_PARAMS = /[?&](response_type|redirect_uri|client_id|code_challenge)=/;

/** The shim for BROWSER reports as "BROWSER", so evidence says what the server ran. */
const programName = (name: string): string => (name === 'agyctl-browser' ? 'BROWSER' : name);

export class UrlCapture {
  readonly found: Promise<CapturedUrl>;
  readonly evidence = new EvidenceLog();
  private resolve!: (c: CapturedUrl) => void;
  private done = false;
  private offset = 0;
  private watcher: fs.FSWatcher | undefined;
  private readonly poll: NodeJS.Timeout;
  private readonly seen = new Set<string>();

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
    for (const url of terminalUrls(raw)) this.consider(url, source, {});
  }

  /** A JSON-RPC message from the server, as Connection.onServerMessage delivers it. */
  feedMessage(msg: JsonRpcMessage, info: MessageInfo): void {
    if (this.done) return;
    for (const { url, where } of messageUrls(msg, info)) this.consider(url, 'rpc', { via: where });
  }

  /** Read the launcher log now (tests; the watcher does it otherwise). */
  flushLog(): void {
    this.readLog();
  }

  close(): void {
    this.done = true;
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
    if (urls.length === 0) this.reject({ channel: 'shim', via, args, reason: noUrlReason(run) }, false);
    else for (const url of urls) this.consider(url, 'shim', { via, args });
  }

  private consider(url: string, source: UrlSource, from: { via?: string; args?: string[] }): void {
    if (this.done || this.seen.has(url)) return;
    this.seen.add(url);
    const v = validateAuthUrl(url);
    const code = !v.ok && this.codeEntry && source === 'stdout' ? validateCodeEntryUrl(url) : undefined;
    if (v.ok || code?.ok) {
      this.close();
      const auth = v.ok ? v.value : (code as { value: AuthUrl }).value;
      this.resolve({
        auth,
        source,
        via: from.via,
        args: from.args,
        capturedAt: Date.now(),
        kind: v.ok ? 'loopback' : 'code-entry',
      });
      return;
    }
    // Anything a launcher got is meant as the sign-in URL; from output and messages, only Google- or OAuth-looking ones are worth a warning.
    const loud = source === 'shim' || looksLikeSignInUrl(url) || OAUTH_PARAMS.test(url);
    this.reject({ channel: source, ...from, url: shorten(redactEvidence(url)), reason: v.reason }, loud);
  }

  private reject(c: Candidate, loud: boolean): void {
    this.evidence.add(c);
    this.onRejected(c, loud);
  }
}
