// A laptop browser for connect tests that is a real browser: Debian's headless
// Chromium, reached through BROWSER (the `open` package's xdg-open runs this).
// Google is played by a one-request HTTP server on this machine's 127.0.0.1
// that answers the sign-in URL (rewritten to it) with a 302 to the URL's
// redirect_uri, with a code and the URL's state — as Google does after the
// consent screen. Chromium follows that redirect on this machine's
// 127.0.0.1:<port>, where connect's forward or relay listens, and prints the
// page it ends on (--dump-dom). Each step is a JSON line in $SHIM_LOG.
//
// $SHIM_REDIRECT_PATH, when set, replaces the redirect's path (a wrong-path test).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const CODE = 'chromium-shim-code';
const log = (entry) => fs.appendFileSync(process.env.SHIM_LOG, `${JSON.stringify(entry)}\n`);
const url = new URL(process.argv[2]);
log({ opened: url.toString() });

const redirect = new URL(url.searchParams.get('redirect_uri'));
redirect.hostname = '127.0.0.1';
if (process.env.SHIM_REDIRECT_PATH) redirect.pathname = process.env.SHIM_REDIRECT_PATH;
redirect.searchParams.set('code', CODE);
redirect.searchParams.set('state', url.searchParams.get('state') ?? '');

const google = http.createServer((_req, res) => {
  res.writeHead(302, { location: redirect.toString() });
  res.end();
});
google.listen(0, '127.0.0.1', () => {
  const signIn = `http://127.0.0.1:${google.address().port}${url.pathname}${url.search}`;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-chromium-'));
  const started = Date.now();
  const chromium = spawn(
    'chromium',
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      '--timeout=20000',
      '--dump-dom',
      signIn,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let dom = '';
  chromium.stdout.on('data', (chunk) => {
    dom += chunk.toString();
  });
  chromium.on('close', (code) => {
    google.close();
    fs.rmSync(profile, { recursive: true, force: true });
    log({
      redirected: redirect.toString(),
      exit: code,
      ms: Date.now() - started,
      page: dom
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    });
  });
});
