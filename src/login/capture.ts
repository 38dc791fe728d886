/**
 * Whichever channel shows a sign-in URL first wins: the browser shims'
 * log, the server's non-JSON stdout lines, or its stderr. Invalid URLs are
 * reported (never used); the first valid one resolves `found`.
 */
import fs from 'node:fs';
import { findUrls, looksLikeSignInUrl, validateAuthUrl, validateCodeEntryUrl, type AuthUrl } from './auth-url.js';
import type { ShimDir } from './shims.js';

export type UrlSource = 'shim' | 'stdout' | 'stderr';

export interface CapturedUrl {
  auth: AuthUrl;
  source: UrlSource;
  /** Which shim (xdg-open, agyctl-browser, ...) when source is 'shim'. */
  via: string | undefined;
  capturedAt: number;
  /** loopback: the browser comes back to the server's listener. code-entry: the user pastes a code the server reads on stdin (auth.port is 0). */
  kind: 'loopback' | 'code-entry';
}

/** inotify is the fast path; this slow poll only guards filesystems where watching fails. */
const FALLBACK_POLL_MS = 500;

export class UrlCapture {
  readonly found: Promise<CapturedUrl>;
  private resolve!: (c: CapturedUrl) => void;
  private done = false;
  private offset = 0;
  private watcher: fs.FSWatcher | undefined;
  private readonly poll: NodeJS.Timeout;
  private readonly seen = new Set<string>();

  constructor(
    private readonly shims: ShimDir,
    private readonly onInvalid: (url: string, reason: string, source: UrlSource) => void,
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

  /** A line of server output (stdout noise or stderr). */
  feedLine(line: string, source: 'stdout' | 'stderr'): void {
    for (const url of findUrls(line)) this.consider(url, source, undefined);
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
    for (const entry of text.split('\n')) {
      const tab = entry.indexOf('\t');
      const via = tab > 0 ? entry.slice(0, tab) : undefined;
      const arg = tab > 0 ? entry.slice(tab + 1) : entry;
      for (const url of findUrls(arg)) this.consider(url, 'shim', via);
    }
  }

  private consider(url: string, source: UrlSource, via: string | undefined): void {
    if (this.done || this.seen.has(url)) return;
    this.seen.add(url);
    const v = validateAuthUrl(url);
    const code = !v.ok && this.codeEntry && source === 'stdout' ? validateCodeEntryUrl(url) : undefined;
    if (v.ok || code?.ok) {
      this.done = true;
      this.close();
      const auth = v.ok ? v.value : (code as { value: AuthUrl }).value;
      this.resolve({ auth, source, via, capturedAt: Date.now(), kind: v.ok ? 'loopback' : 'code-entry' });
    } else if (source === 'shim' || looksLikeSignInUrl(url)) {
      // Anything a browser shim got is meant as the sign-in URL; from output lines, only Google-looking ones.
      this.onInvalid(url, v.reason, source);
    }
  }
}
