/**
 * The proof that a fleet dashboard can read agyctl's metrics: the real
 * prometheus-node-exporter (Debian package) runs with its textfile collector
 * pointed at the directory `agyctl check --prometheus` writes into, on a free
 * loopback port, and its /metrics must carry agyctl's series with the right
 * values and `node_textfile_scrape_error 0` (the collector parsed our file).
 * A missing node_exporter is a failure, not a skip: .ci/run installs it.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, type Sandbox, writeSettings } from '../helpers/cli.js';

const EXPORTER = ['/usr/bin/prometheus-node-exporter', '/usr/sbin/prometheus-node-exporter'].find((p) =>
  fs.existsSync(p),
);

let sandbox: Sandbox | undefined;
let exporter: ResultPromise | undefined;

afterEach(async () => {
  exporter?.kill('SIGKILL');
  await exporter;
  exporter = undefined;
  sandbox?.cleanup();
  sandbox = undefined;
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Start node_exporter with only the textfile collector; retry on a port another process took meanwhile. */
async function startExporter(dir: string): Promise<string> {
  if (!EXPORTER)
    throw new Error(
      'prometheus-node-exporter is not installed; .ci/run installs it: apt-get install prometheus-node-exporter',
    );
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const port = await freePort();
    let log = '';
    const child = execa(
      EXPORTER,
      [
        '--web.listen-address',
        `127.0.0.1:${port}`,
        '--collector.disable-defaults',
        '--collector.textfile',
        `--collector.textfile.directory=${dir}`,
      ],
      { reject: false, stdin: 'ignore', buffer: false, timeout: 60_000 },
    );
    child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      const poll = setInterval(() => {
        if (/Listening on|msg="Listening/.test(log)) {
          clearInterval(poll);
          clearTimeout(timer);
          resolve(true);
        }
      }, 50);
      void child.then(() => {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (ready) {
      exporter = child;
      return `http://127.0.0.1:${port}/metrics`;
    }
    child.kill('SIGKILL');
    await child;
    if (!/address already in use/.test(log)) throw new Error(`node_exporter did not start: ${log}`);
  }
  throw new Error('node_exporter found no free port in 5 attempts');
}

/** `name{labels} value` lines of one metric, as label-string -> value. */
function series(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === name) found.set(m[2] ?? '', Number(m[3]));
  }
  return found;
}

const only = (text: string, name: string): number | undefined => series(text, name).get('');

describe('node_exporter reads agyctl check --prometheus', () => {
  it('exports the check, token expiry and refresh-token gauges with the right values', async () => {
    sandbox = makeSandbox();
    writeSettings(sandbox, { auth: { type: 'oauth-personal' } });
    const expiry = Date.now() + 3_600_000;
    const tokenFile = path.join(sandbox.stateDir, 'acp_token.json');
    fs.writeFileSync(tokenFile, JSON.stringify({ access_token: 'x', refresh_token: 'r', expiry_date: expiry }), {
      mode: 0o600,
    });
    const textfiles = path.join(sandbox.root, 'textfile');
    fs.mkdirSync(textfiles);
    const prom = path.join(textfiles, 'agyctl.prom');

    const ok = await agyctl(['check', '--prometheus', prom], sandbox);
    expect(ok.exitCode, ok.stderr).toBe(0);
    const url = await startExporter(textfiles);
    let text = await (await fetch(url)).text();
    expect(only(text, 'node_textfile_scrape_error'), text).toBe(0);
    expect(only(text, 'agyctl_check_ok')).toBe(1);
    expect(series(text, 'agyctl_check_status').get('{status="ok"}')).toBe(1);
    expect(series(text, 'agyctl_check_status').get('{status="not-authenticated"}')).toBe(0);
    expect(only(text, 'agyctl_token_file_mode_ok')).toBe(1);
    expect(only(text, 'agyctl_token_refresh_token_present')).toBe(1);
    expect(Math.abs(only(text, 'agyctl_token_expiry_timestamp_seconds')! - expiry / 1000)).toBeLessThanOrEqual(1);
    expect(series(text, 'agyctl_check_passed').get('{check="token-file",severity="error"}')).toBe(1);
    expect(text).toMatch(/^# TYPE agyctl_token_expiry_timestamp_seconds gauge$/m);
    expect(text).toMatch(/^# TYPE agyctl_token_refresh_token_present gauge$/m);
    // The collector reports the file's mtime: proof it read this file.
    expect(
      series(text, 'node_textfile_mtime_seconds').get(`{file="${prom}"}`) ??
        series(text, 'node_textfile_mtime_seconds').get('{file="agyctl.prom"}'),
    ).toBeGreaterThan(0);

    // A failing check: no refresh token, wrong mode. The next scrape sees the new file.
    fs.writeFileSync(tokenFile, JSON.stringify({ access_token: 'x', expiry_date: expiry }));
    fs.chmodSync(tokenFile, 0o644);
    const bad = await agyctl(['check', '--prometheus', prom], sandbox);
    expect(bad.exitCode, bad.stderr).toBe(6);
    text = await (await fetch(url)).text();
    expect(only(text, 'node_textfile_scrape_error'), text).toBe(0);
    expect(only(text, 'agyctl_check_ok')).toBe(0);
    expect(series(text, 'agyctl_check_status').get('{status="misconfigured"}')).toBe(1);
    expect(only(text, 'agyctl_token_file_mode_ok')).toBe(0);
    expect(only(text, 'agyctl_token_refresh_token_present')).toBe(0);
    expect(fs.readdirSync(textfiles)).toEqual(['agyctl.prom']);
  }, 60_000);
});
