/**
 * Launchers handed a local file that leads to the sign-in URL, not the URL:
 * which arguments name a file, what HTML pages, .desktop and .url files
 * lead to, and the pipeline reading them safely: hostile files (links,
 * FIFOs, directories, devices, oversize, unreadable) are evidence, never
 * followed, never a hang; what a file leads to is validated like any URL.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type Candidate, describeCandidate } from '../../src/login/capture/evidence.js';
import {
  decodeEntities,
  fileArgument,
  fileKind,
  MAX_FILE_BYTES,
  MAX_FILES,
  urlsInFile,
} from '../../src/login/capture/launcher-source.js';
import { type CapturedUrl, UrlCapture } from '../../src/login/capture/pipeline.js';
import { createShimDir, type ShimDir } from '../../src/login/shims.js';

const GOOD =
  'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=x.apps.googleusercontent.com&redirect_uri=http%3A%2F%2F127.0.0.1%3A35293%2F&scope=a+b&state=S123&access_type=offline&code_challenge=CHAL&code_challenge_method=S256';
const amp = (url: string): string => url.replace(/&/g, '&amp;');
const refreshPage = (url: string): string =>
  `<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0;url=${amp(url)}"></head><body><p>BODY-TEXT-NEVER-SHOWN</p></body></html>\n`;

let shims: ShimDir | undefined;
let capture: UrlCapture | undefined;
let dir: string | undefined;
afterEach(() => {
  capture?.close();
  shims?.remove();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  capture = shims = dir = undefined;
});

/** A private dir for the files a launcher is handed. */
function filesDir(): string {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-file-test-'));
  return dir;
}

function write(name: string, text: string | Buffer, mode = 0o600): string {
  const file = path.join(dir ?? filesDir(), name);
  fs.writeFileSync(file, text, { mode });
  return file;
}

/** A capture that has seen these launcher runs (program, then arguments); what it found, and what it rejected. */
function runLaunchers(...runs: string[][]): {
  found: () => CapturedUrl | undefined;
  rejected: Array<[Candidate, boolean]>;
} {
  shims = createShimDir({});
  const rejected: Array<[Candidate, boolean]> = [];
  capture = new UrlCapture(shims, (c, loud) => rejected.push([c, loud]));
  let found: CapturedUrl | undefined;
  void capture.found.then((f) => (found = f));
  fs.appendFileSync(shims.log, runs.map((r) => `${r.join('\t')}\n`).join(''));
  capture.flushLog();
  return { found: () => found, rejected };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('launcher arguments that name a file', () => {
  it('an absolute path, or a file:// URL with an empty host or localhost, percent-escapes decoded', () => {
    expect(fileArgument('/tmp/x/open.html')).toEqual({ path: '/tmp/x/open.html' });
    expect(fileArgument('/tmp//x/open')).toEqual({ path: '/tmp/x/open' });
    expect(fileArgument('file:///tmp/a%20b/open%2Ehtml')).toEqual({ path: '/tmp/a b/open.html' });
    expect(fileArgument('FILE://localhost/tmp/x.desktop#frag')).toEqual({ path: '/tmp/x.desktop' });
  });

  it('refused: another host, broken escapes, relative paths, dot segments, directories', () => {
    expect(fileArgument('file://evil.example/tmp/x.html')).toEqual({ refused: expect.stringMatching(/another host/) });
    expect(fileArgument('file:///tmp/%E0%A4%A.html')).toEqual({ refused: expect.stringMatching(/%-escape/) });
    expect(fileArgument('file:open.html')).toEqual({ refused: expect.stringMatching(/not file:\/\/\/absolute/) });
    expect(fileArgument('open.html')).toEqual({ refused: expect.stringMatching(/relative path/) });
    expect(fileArgument('./runtime/jpserver-1-open.html')).toEqual({ refused: expect.stringMatching(/relative/) });
    expect(fileArgument('/tmp/x/../etc/x.html')).toEqual({ refused: expect.stringMatching(/\.\. in it/) });
    expect(fileArgument('file:///tmp/x/%2E%2E%2Fy.html')).toEqual({ refused: expect.stringMatching(/\.\. in it/) });
    expect(fileArgument('/tmp/x/')).toEqual({ refused: expect.stringMatching(/directory/) });
  });

  it('not a file: URLs, flags and words', () => {
    for (const arg of [GOOD, 'https://example.com/page.html', '--version', 'open', 'exec', '%s'])
      expect(fileArgument(arg)).toBeUndefined();
  });
});

describe('what a file leads to', () => {
  it('HTML: a meta refresh in any case and quote style, entity-encoded', () => {
    for (const tag of [
      `<meta http-equiv="refresh" content="0;url=${amp(GOOD)}">`,
      `<META HTTP-EQUIV='Refresh' CONTENT='1; URL=${GOOD.replace(/&/g, '&#38;')}' />`,
      `<meta content="5, url='${GOOD.replace(/&/g, '&#x26;')}'" http-equiv=refresh>`,
      `<meta http-equiv=refresh content=0;url=${GOOD}>`,
    ])
      expect(urlsInFile('html', `<html><head>${tag}</head></html>`)).toEqual([GOOD]);
  });

  it('HTML: links and location assignments; the redirect comes first; comments are not the page', () => {
    const page = [
      '<!-- <meta http-equiv="refresh" content="0;url=https://commented.example/"> -->',
      `<a class=x href="${amp('https://example.com/a?b=1&c=2')}">docs</a>`,
      `<script>window.location.href = "${GOOD.replace(/\//g, '\\/')}";</script>`,
      `<script>if (x) location.replace('https://example.com/replaced');</script>`,
      `<meta http-equiv="refresh" content="0;url=${amp(GOOD)}">`,
      '<a href="#top">top</a><a href="">empty</a>',
    ].join('\n');
    expect(urlsInFile('html', page)).toEqual([GOOD, 'https://example.com/replaced', 'https://example.com/a?b=1&c=2']);
  });

  it('entities: named, decimal and hex; unknown and unterminated ones stay as written', () => {
    expect(decodeEntities('a&amp;b&#38;c&#x26;d&quot;e&apos;f&lt;g&gt;')).toBe(`a&b&c&d"e'f<g>`);
    expect(decodeEntities('&bogus; &amp &#0; &#xD800;')).toBe('&bogus; &amp \ufffd \ufffd');
  });

  it('.desktop: URL= and Exec= with a URL (%% and quotes undone), in [Desktop Entry] only', () => {
    const link = ['# a comment', '[Desktop Entry]', 'Type=Link', `URL=${GOOD}`, '[Other]', 'URL=https://x.example/'];
    expect(urlsInFile('desktop', link.join('\n'))).toEqual([GOOD]);
    const app = ['[Desktop Entry]', 'Type=Application', `Exec=xdg-open "${GOOD.replace(/%/g, '%%')}" %u`];
    expect(urlsInFile('desktop', app.join('\n'))).toEqual([GOOD]);
  });

  it('.url: URL= in [InternetShortcut], CRLF, a [DEFAULT] group before it', () => {
    const text = ['[DEFAULT]', 'BASEURL=https://base.example/', '[InternetShortcut]', `url=${GOOD}`, ''].join('\r\n');
    expect(urlsInFile('url', text)).toEqual([GOOD]);
  });

  it('the kind comes from the content first, then from the name', () => {
    expect(fileKind('/t/tmpab12', '[Desktop Entry]\nURL=x')).toBe('desktop');
    expect(fileKind('/t/tmpab12', '\ufeff[InternetShortcut]\r\nURL=x')).toBe('url');
    expect(fileKind('/t/tmpab12', '<meta http-equiv=refresh content=0>')).toBe('html');
    expect(fileKind('/t/page.HTM', 'no markup')).toBe('html');
    expect(fileKind('/t/notes.txt', 'see https://example.com/')).toBeUndefined();
  });

  it('the simulator pages lead to the URL they were written for', async () => {
    const { pageText } = await import('../../src/sim/launch-file.js');
    for (const kind of ['html', 'desktop', 'url'] as const) {
      const text = pageText(kind, GOOD);
      expect(fileKind(`/t/page`, text)).toBe(kind);
      expect(urlsInFile(kind, text)).toEqual([GOOD]);
    }
    expect(pageText('html', GOOD)).not.toContain(GOOD); // entity-encoded, as a template engine leaves it
  });
});

describe('the pipeline reading launcher files', () => {
  it.each([
    ['an absolute path', (f: string) => f],
    ['a file:// URL', (f: string) => pathToFileURL(f).href],
  ])('an HTML page with a meta refresh, given as %s: captured on launcher-file, kind html', (_n, ref) => {
    const file = write('open page.html', refreshPage(GOOD));
    const { found, rejected } = runLaunchers(['agyctl-browser', ref(file)]);
    return settle().then(() => {
      expect(found()).toMatchObject({
        source: 'launcher-file',
        via: 'BROWSER',
        file: { kind: 'html' },
        args: [ref(file)],
        kind: 'loopback',
      });
      expect(found()!.auth.url).toBe(new URL(GOOD).toString());
      expect(found()!.auth.port).toBe(35293);
      expect(rejected).toEqual([]);
    });
  });

  it('.desktop and .url files are captured the same way', async () => {
    const desktop = write('signin.desktop', `[Desktop Entry]\nType=Link\nURL=${GOOD}\n`);
    const first = runLaunchers(['xdg-open', desktop]);
    await settle();
    expect(first.found()).toMatchObject({ source: 'launcher-file', via: 'xdg-open', file: { kind: 'desktop' } });
    capture?.close();
    shims?.remove();
    const shortcut = write('signin.url', `[InternetShortcut]\r\nURL=${GOOD}\r\n`);
    const second = runLaunchers(['gio', 'open', shortcut]);
    await settle();
    expect(second.found()).toMatchObject({ source: 'launcher-file', via: 'gio', file: { kind: 'url' } });
  });

  it('a page leading to a non-Google URL, or to a javascript: URL: rejected loudly, naming the file kind, never taken', async () => {
    const evil = write(
      'evil.html',
      refreshPage('https://evil.example/o/oauth2/v2/auth?response_type=code&state=SEKRIT'),
    );
    const js = write('js.html', `<a href="javascript:location.href='${amp(GOOD)}'">sign in</a>`);
    const { found, rejected } = runLaunchers(['agyctl-browser', evil], ['xdg-open', js]);
    await settle();
    expect(found()).toBeUndefined();
    expect(rejected.map(([c, loud]) => [c.channel, c.file, c.reason, loud])).toEqual([
      ['launcher-file', { kind: 'html' }, expect.stringMatching(/host evil\.example is not Google's/), true],
      ['launcher-file', { kind: 'html' }, 'scheme is javascript, expected https', true],
    ]);
    expect(rejected[0]![0].url).toBe('https://evil.example/o/oauth2/v2/auth?response_type=code&state=[REDACTED]');
    expect(describeCandidate(rejected[0]![0])).toMatch(
      /^an HTML page from launcher BROWSER \/.*evil\.html: https:\/\/evil\.example\/.* — host evil\.example/,
    );
  });

  it('a symlink to a file outside the directory is not followed', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-file-outside-'));
    try {
      fs.writeFileSync(path.join(outside, 'secret.html'), refreshPage(GOOD));
      filesDir();
      const link = path.join(dir!, 'open.html');
      fs.symlinkSync(path.join(outside, 'secret.html'), link);
      const { found, rejected } = runLaunchers(['agyctl-browser', link], ['xdg-open', pathToFileURL(link).href]);
      await settle();
      expect(found()).toBeUndefined();
      expect(rejected.map(([c]) => c.reason)).toEqual(['not read: a symbolic link (not followed)']);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('a FIFO is refused at once (no writer: a blocking open would hang), a directory and a device too', async () => {
    filesDir();
    const fifo = path.join(dir!, 'open.html');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const sub = path.join(dir!, 'sub.html');
    fs.mkdirSync(sub);
    const started = Date.now();
    const { found, rejected } = runLaunchers(['agyctl-browser', fifo], ['xdg-open', sub], ['gio', 'open', '/dev/null']);
    await settle();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(found()).toBeUndefined();
    expect(rejected.map(([c]) => c.reason)).toEqual([
      'not read: a FIFO',
      'not read: a directory',
      'not read: a device',
    ]);
  });

  it('an oversize file is not read at all, even with a valid redirect at its start', async () => {
    const big = write('big.html', refreshPage(GOOD) + 'x'.repeat(MAX_FILE_BYTES));
    const { found, rejected } = runLaunchers(['agyctl-browser', big]);
    await settle();
    expect(found()).toBeUndefined();
    expect(rejected.map(([c]) => [c.file, c.reason])).toEqual([
      [{ kind: 'html' }, expect.stringMatching(/^not read: too big \(\d+ bytes, over the 64 KiB bound/)],
    ]);
  });

  it('a relative path and a file:// URL on another host are not read, a missing file is evidence', async () => {
    write('open.html', refreshPage(GOOD));
    const { found, rejected } = runLaunchers(
      ['agyctl-browser', 'open.html'],
      ['xdg-open', `file://evil.example${path.join(dir!, 'open.html')}`],
      ['gio', 'open', path.join(dir!, 'missing.html')],
      ['kioclient', 'exec', '/nonexistent-dir-agyctl/x.html'],
    );
    await settle();
    expect(found()).toBeUndefined();
    expect(rejected.map(([c, loud]) => [c.channel, c.reason, loud])).toEqual([
      ['launcher-file', expect.stringMatching(/relative path: not read/), false],
      ['launcher-file', expect.stringMatching(/another host: not read/), false],
      ['launcher-file', 'not read: does not exist', false],
      ['launcher-file', 'not read: its directory does not exist', false],
    ]);
  });

  it('a file that cannot be read is evidence, never an error (the read fails whoever runs it, root too)', async () => {
    // /proc/self/mem is a regular file whose read at offset 0 fails (EIO: address 0 is not mapped).
    const { found, rejected } = runLaunchers(['agyctl-browser', '/proc/self/mem']);
    await settle();
    expect(found()).toBeUndefined();
    expect(rejected.map(([c]) => [c.channel, c.reason])).toEqual([
      ['launcher-file', expect.stringMatching(/^not read: /)],
    ]);
  });

  it('a file with no URL, or of no known kind: evidence saying so; its contents never appear', async () => {
    const empty = write('empty.html', '<html><body><p>BODY-TEXT-NEVER-SHOWN</p></body></html>');
    const notes = write('notes.txt', 'BODY-TEXT-NEVER-SHOWN https://example.com/');
    const { rejected } = runLaunchers(['agyctl-browser', empty], ['xdg-open', notes]);
    await settle();
    expect(rejected.map(([c]) => c.reason)).toEqual([
      'no URL in it (no meta refresh, link or location assignment)',
      'not an HTML page, .desktop or .url file: not parsed',
    ]);
    expect(JSON.stringify(rejected)).not.toContain('BODY-TEXT-NEVER-SHOWN');
    expect(capture!.evidence.candidates).toHaveLength(2);
  });

  it('each path is read once per capture: a page rewritten after its first read is not read again', async () => {
    const file = write('open.html', refreshPage('https://example.com/not-yet'));
    const { found, rejected } = runLaunchers(['agyctl-browser', file]);
    fs.writeFileSync(file, refreshPage(GOOD));
    fs.appendFileSync(shims!.log, `xdg-open\t${file}\ngio\topen\t${pathToFileURL(file).href}\n`);
    capture!.flushLog();
    await settle();
    expect(found()).toBeUndefined();
    expect(rejected).toHaveLength(1);
  });

  it(`at most ${MAX_FILES} files are read per capture`, async () => {
    const files = Array.from({ length: MAX_FILES + 2 }, (_, i) => write(`p${i}.html`, '<html></html>'));
    const { rejected } = runLaunchers(...files.map((f) => ['agyctl-browser', f]));
    await settle();
    expect(rejected.slice(MAX_FILES).map(([c]) => c.reason)).toEqual([
      `not read: this capture already read ${MAX_FILES} files`,
      `not read: this capture already read ${MAX_FILES} files`,
    ]);
  });

  it('a URL among the arguments is judged before any file, and a file is no longer read once it won', async () => {
    const file = write('open.html', refreshPage('https://example.com/x'));
    const { found, rejected } = runLaunchers(['firefox', '--profile', file, GOOD]);
    await settle();
    expect(found()).toMatchObject({ source: 'shim', via: 'firefox' });
    expect(rejected).toEqual([]);
  });
});
