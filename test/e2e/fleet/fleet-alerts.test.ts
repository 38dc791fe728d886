/**
 * The alerting rules shipped with the collection (ansible/prometheus/
 * agyctl-alerts.yml): `promtool check rules`, their `promtool test rules`
 * unit tests (test/prometheus/agyctl-alerts.test.yml, firing and not firing
 * for each rule), and the real thing: Debian's Prometheus server on loopback,
 * scraping two node_exporters every second, each reading the file `agyctl
 * check --prometheus` wrote for one box. The box that is not signed in gets
 * an active AgyctlCredentialsFailing alert, the healthy one (an access token
 * that expires within the hour, with a refresh token) gets none. Missing
 * promtool or prometheus is a failure, not a skip: .ci/run installs them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, ROOT, writeSettings } from '../../helpers/cli.js';
import { type Daemon, PROMETHEUS, startDaemon, startNodeExporter } from '../../helpers/loopback-daemon.js';
import { which } from '../../helpers/ns-lab.js';
import { until } from '../../helpers/until.js';

const RULES = path.join(ROOT, 'ansible', 'prometheus', 'agyctl-alerts.yml');
const RULE_TESTS = path.join(ROOT, 'test', 'prometheus', 'agyctl-alerts.test.yml');
/** The version-skew rule's tests: a day of series, evaluated every 10 minutes. */
const SERVER_RULE_TESTS = path.join(ROOT, 'test', 'prometheus', 'agyctl-server-alerts.test.yml');

/** Between two queries of Prometheus's HTTP API. */
const QUERY_EVERY_MS = 250;
const daemons: Daemon[] = [];
let scratch: string | undefined;

beforeAll(() => {
  if (!which('promtool') || !PROMETHEUS)
    throw new Error('promtool or prometheus is not installed; .ci/run installs them: apt-get install prometheus');
});

afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

const promtool = (args: string[]) => execa('promtool', args, { reject: false, timeout: 60_000, stdin: 'ignore' });

describe('the shipped alerting rules', () => {
  it('pass promtool check rules', async () => {
    const r = await promtool(['check', 'rules', RULES]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: 8 rules found/);
  });

  it('pass their promtool unit tests, which fail when a rule loses its guard', async () => {
    const r = await promtool(['test', 'rules', RULE_TESTS, SERVER_RULE_TESTS]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    // The same tests against rules that forget the refresh token: the hourly-token box would alert, and the test says so.
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-rules-'));
    const loose = fs.readFileSync(RULES, 'utf8').replace('agyctl_token_refresh_token_present == 0\n          and ', '');
    expect(loose).not.toBe(fs.readFileSync(RULES, 'utf8'));
    fs.mkdirSync(path.join(scratch, 'ansible', 'prometheus'), { recursive: true });
    fs.mkdirSync(path.join(scratch, 'test', 'prometheus'), { recursive: true });
    fs.writeFileSync(path.join(scratch, 'ansible', 'prometheus', 'agyctl-alerts.yml'), loose);
    fs.copyFileSync(RULE_TESTS, path.join(scratch, 'test', 'prometheus', 'agyctl-alerts.test.yml'));
    const bad = await promtool(['test', 'rules', path.join(scratch, 'test', 'prometheus', 'agyctl-alerts.test.yml')]);
    expect(bad.exitCode).not.toBe(0);
    expect(`${bad.stdout}\n${bad.stderr}`).toMatch(/alertname: AgyctlCredentialsCannotRenew[\s\S]*instance="hourly"/);
    // And a version-skew rule without its day of grace: a rollout in progress would alert.
    const hasty = fs.readFileSync(RULES, 'utf8').replace(/(alert: AgyctlServerVersionSkew[\s\S]*?)\n {8}for: 1d/, '$1');
    expect(hasty).not.toBe(fs.readFileSync(RULES, 'utf8'));
    fs.writeFileSync(path.join(scratch, 'ansible', 'prometheus', 'agyctl-alerts.yml'), hasty);
    fs.copyFileSync(SERVER_RULE_TESTS, path.join(scratch, 'test', 'prometheus', 'agyctl-server-alerts.test.yml'));
    const early = await promtool([
      'test',
      'rules',
      path.join(scratch, 'test', 'prometheus', 'agyctl-server-alerts.test.yml'),
    ]);
    expect(early.exitCode).not.toBe(0);
    expect(`${early.stdout}\n${early.stderr}`).toMatch(/alertname: AgyctlServerVersionSkew, time: 23h/);
  });
});

interface Alert {
  labels: Record<string, string>;
  state: string;
}

async function api<T>(prom: Daemon, query: string): Promise<T> {
  const res = await fetch(`${prom.base}/api/v1/${query}`);
  const body = (await res.json()) as { status: string; data: T };
  if (body.status !== 'success') throw new Error(`prometheus ${query}: ${JSON.stringify(body)}`);
  return body.data;
}

/** One box: a HOME whose check wrote agyctl.prom into a textfile directory, and a node_exporter reading it. */
async function box(token: object | undefined): Promise<Daemon> {
  const sb = makeSandbox();
  writeSettings(sb, { auth: { type: 'oauth-personal' } });
  if (token) fs.writeFileSync(path.join(sb.stateDir, 'acp_token.json'), JSON.stringify(token), { mode: 0o600 });
  const textfiles = path.join(sb.root, 'textfile');
  fs.mkdirSync(textfiles);
  const r = await agyctl(['check', '--prometheus', path.join(textfiles, 'agyctl.prom')], sb);
  expect(r.exitCode, r.stderr).toBe(token ? 0 : 3);
  const exporter = await startNodeExporter(textfiles);
  daemons.push(exporter);
  return exporter;
}

describe('Prometheus with the shipped rules, over node_exporter reading agyctl', () => {
  it('alerts for the box that is not signed in and for nothing on the healthy one', async () => {
    const lost = await box(undefined);
    const good = await box({ access_token: 'a', refresh_token: 'r', expiry_date: Date.now() + 3_000_000 });
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-prometheus-'));
    const config = path.join(scratch, 'prometheus.yml');
    fs.writeFileSync(
      config,
      [
        'global: {scrape_interval: 1s, evaluation_interval: 1s}',
        `rule_files: [${JSON.stringify(RULES)}]`,
        'scrape_configs:',
        '  - job_name: node',
        '    static_configs:',
        `      - {targets: ["127.0.0.1:${lost.port}"], labels: {box: lost}}`,
        `      - {targets: ["127.0.0.1:${good.port}"], labels: {box: good}}`,
        '',
      ].join('\n'),
    );
    const prom = await startDaemon(
      PROMETHEUS!,
      (port) => [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(scratch!, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--storage.tsdb.retention.time=1h',
      ],
      /Server is ready to receive web requests/,
      90_000,
    );
    daemons.push(prom);
    // Both boxes scraped: their agyctl_check_ok arrived.
    await until(
      'both boxes scraped',
      45_000,
      async () => {
        const r = await api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
          prom,
          `query?query=${encodeURIComponent('agyctl_check_ok')}`,
        );
        const seen = Object.fromEntries(r.result.map((x) => [x.metric.box, x.value[1]]));
        return seen.lost === '0' && seen.good === '1' ? seen : undefined;
      },
      QUERY_EVERY_MS,
    );
    const scrapedAt = Date.now();
    const active = await until(
      'the alert for the lost box',
      45_000,
      async () => {
        const { alerts } = await api<{ alerts: Alert[] }>(prom, 'alerts');
        return alerts.find((a) => a.labels.box === 'lost' && a.labels.alertname === 'AgyctlCredentialsFailing');
      },
      QUERY_EVERY_MS,
    );
    // Pending: the rule waits 10 minutes before it fires; pending and firing are both active.
    expect(['pending', 'firing']).toContain(active.state);
    expect(active.labels).toMatchObject({ status: 'not-authenticated', severity: 'critical' });
    // Rules evaluated after both boxes were in: still nothing for the healthy one.
    await until(
      'an evaluation after both scrapes',
      30_000,
      async () => {
        const { groups } = await api<{ groups: Array<{ name: string; lastEvaluation: string }> }>(prom, 'rules');
        const g = groups.find((x) => x.name === 'agyctl');
        return g && Date.parse(g.lastEvaluation) > scrapedAt + 1000 ? g : undefined;
      },
      QUERY_EVERY_MS,
    );
    const { alerts } = await api<{ alerts: Alert[] }>(prom, 'alerts');
    expect(alerts.filter((a) => a.labels.box === 'good')).toEqual([]);
    expect(alerts.filter((a) => a.labels.box === 'lost').map((a) => a.labels.alertname)).toEqual([
      'AgyctlCredentialsFailing',
    ]);
  }, 120_000);
});
