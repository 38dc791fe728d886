// A laptop "browser" for connect tests, reached through BROWSER (the `open`
// package's xdg-open runs it). It plays Google too: it sends the browser's
// redirect to the URL's redirect_uri with a code and the URL's state, on
// this machine's 127.0.0.1 — which reaches the remote login only through
// the SSH forward. Every step is appended as a JSON line to $SHIM_LOG.
import fs from 'node:fs';
import http from 'node:http';

const log = (entry) => fs.appendFileSync(process.env.SHIM_LOG, `${JSON.stringify(entry)}\n`);
const url = new URL(process.argv[2]);
log({ opened: url.toString() });
const redirect = new URL(url.searchParams.get('redirect_uri'));
redirect.hostname = '127.0.0.1';
redirect.searchParams.set('code', 'browser-shim-code');
redirect.searchParams.set('state', url.searchParams.get('state') ?? '');
const req = http.get(redirect, { timeout: 10_000, agent: false }, (res) => {
  res.resume();
  res.on('end', () => log({ redirected: redirect.toString(), status: res.statusCode }));
});
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', (err) => log({ redirected: redirect.toString(), error: err.message }));
