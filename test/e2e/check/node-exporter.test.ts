/**
 * The proof that a fleet dashboard can read agyctl's metrics: the real
 * prometheus-node-exporter (Debian package) runs with its textfile collector
 * pointed at the directory `agyctl check --prometheus` writes into, on a free
 * loopback port, and its /metrics must carry agyctl's series with the right
 * values and `node_textfile_scrape_error 0` (the collector parsed our file).
 * A missing node_exporter is a failure, not a skip: .ci/run installs it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, type Sandbox, writeSettings } from '../../helpers/cli.js';
import { type Daemon, series, startNodeExporter } from '../../helpers/loopback-daemon.js';

let sandbox: Sandbox | undefined;
let exporter: Daemon | undefined;

afterEach(async () => {
  await exporter?.stop();
  exporter = undefined;
  sandbox = undefined;
});

async function startExporter(dir: string): Promise<string> {
  exporter = await startNodeExporter(dir);
  return `${exporter.base}/metrics`;
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
    expect(only(text, 'agyctl_token_fields_known')).toBe(1);
    expect(only(text, 'agyctl_token_file_mtime_timestamp_seconds')).toBe(
      Math.round(fs.statSync(tokenFile).mtimeMs / 1000),
    );
    const ran = only(text, 'agyctl_check_last_run_timestamp_seconds')!;
    expect(Math.abs(ran - Date.now() / 1000)).toBeLessThan(120);
    expect(only(text, 'agyctl_last_check_timestamp_seconds')).toBe(ran);
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
