/**
 * The role installs the server itself, on the Debian 12 boxes of
 * fleet-debian-systemd.test.ts (debootstrap trees booted with systemd-nspawn
 * inside the fleet lab; no route off the lab link, no Node on the box): the
 * archive sits on the controller only, the `server` playbook rolls it out
 * host by host (serial 1), and a build that fails its proof is rolled back
 * on the first host and stops the play before the second. The archives are
 * fakes made here (test/helpers/server-archive.ts): a launcher that runs the
 * simulator, bound read-only into the box at /opt/agy-sim with its own Node,
 * beside a `localharness_external`. No server is on the box's PATH, so the
 * check unit can only run the one the role installed. The role's metrics
 * (agyctl_server_info, the last install's time) are served by each box's
 * node_exporter, and Debian's Prometheus, loading the shipped rules over
 * them, holds AgyctlServerVersionSkew while the boxes differ.
 *
 * @module-tag root
 * @module-tag ansible
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ansiblePlay, controllerDir, PLAYBOOKS, type PlayRun } from '../../helpers/ansible-play.js';
import { ROOT, SIM } from '../../helpers/cli.js';
import { type FleetLab, requireFleetLab, useFleetLab } from '../../helpers/fleet-lab.js';
import { type Daemon, PROMETHEUS, series, startDaemon, startNodeExporter } from '../../helpers/loopback-daemon.js';
import { ip, which } from '../../helpers/ns-lab.js';
import { copyApp, type ReleaseFiles, releaseFiles } from '../../helpers/release-artifacts.js';
import { launcher, sha256Of, writeZip } from '../../helpers/server-archive.js';
import { bootSystemdBox, debianSystemdTree, type SystemdBox } from '../../helpers/systemd-box.js';
import { until } from '../../helpers/until.js';

const fx = useFleetLab({ hosts: 2 });
const PLAY_TEST_MS = 900_000;
/** Between two queries of Prometheus's HTTP API. */
const QUERY_EVERY_MS = 250;
// Three plays of two hosts one after the other: slow on a loaded machine.
const ROLLOUT_TEST_MS = 1_800_000;
const USER = 'agy';
const STATE = `/home/${USER}/.gemini/antigravity-acp`;
const SIM_DIR = '/opt/agy-sim';
const STORE = '/opt/agyctl/servers/antigravity-acp';
const TEXTFILE = '/var/lib/prometheus/node-exporter';
const SERVER_LINE = `${STORE}/current/agy_acp_server.par --uid=`;

interface Build {
  file: string;
  sum: string;
}

let release: ReleaseFiles | undefined;
let unavailable: string | undefined;
const boxes = new Map<string, SystemdBox>();
const builds: Record<'v1' | 'v2' | 'v3', Build> = {} as Record<'v1' | 'v2' | 'v3', Build>;
const daemons: Daemon[] = [];

/** A fake build whose launcher runs the simulator bound into the box, with its switches. */
function writeBuild(dir: string, version: string, simEnv: Record<string, string>): Build {
  const file = path.join(dir, `antigravity-acp-${version}-linux-x86_64.zip`);
  const sim = `${SIM_DIR}/app/${path.relative(ROOT, SIM)}`;
  writeZip(file, [
    { name: 'agy_acp_server.par', mode: 0o755, data: launcher(sim, simEnv, `${SIM_DIR}/node`) },
    { name: 'localharness_external', mode: 0o755, data: Buffer.alloc(4096, 7) },
  ]);
  return { file, sum: sha256Of(file) };
}

beforeAll(async () => {
  if (!which('ansible-playbook'))
    throw new Error('ansible-playbook is not installed; .ci/run installs it: apt-get install ansible-core');
  if (!which('promtool') || !PROMETHEUS)
    throw new Error('promtool or prometheus is not installed; .ci/run installs them: apt-get install prometheus');
  const lab = fx.result()?.lab;
  if (!lab) return;
  const { tree, unavailable: why } = await debianSystemdTree();
  if (!tree) {
    unavailable = why;
    return;
  }
  release = await releaseFiles(path.join(lab.dir, 'artifacts'));
  const archives = path.join(lab.dir, 'server-archives');
  fs.mkdirSync(archives, { recursive: true });
  builds.v1 = writeBuild(archives, '1.0.0', { AGY_SIM_VERSION: 'agy_acp_server_1.0.0_RC01' });
  builds.v2 = writeBuild(archives, '2.0.0', { AGY_SIM_VERSION: 'agy_acp_server_2.0.0_RC01' });
  // Broken on purpose: exits before it answers initialize.
  builds.v3 = writeBuild(archives, '3.0.0', { AGY_SIM_EXIT_AT_START: '70' });
  fs.copyFileSync(`${lab.clientKey}.pub`, path.join(lab.dir, 'authorized_keys'));
  const sim = path.join(lab.dir, 'sim');
  await copyApp(path.join(sim, 'app'));
  fs.copyFileSync(process.execPath, path.join(sim, 'node'));
  fs.chmodSync(sim, 0o755);
  for (const h of lab.hosts) {
    await h.stopSshd();
    const box = await bootSystemdBox({
      tree,
      netns: h.ns,
      name: `agyctl-srv-${h.name}-${process.pid}`,
      dir: path.join(lab.dir, `box-${h.name}`),
      bindRo: [
        [path.join(lab.dir, 'authorized_keys'), '/root/.ssh/authorized_keys'],
        [sim, SIM_DIR],
      ],
    });
    boxes.set(h.name, box);
    await must(box, ['useradd', '--create-home', '--shell', '/bin/bash', USER]);
  }
}, 1_200_000);

afterAll(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  for (const box of boxes.values()) await box.stop();
}, 120_000);

async function must(box: SystemdBox, argv: string[]): Promise<string> {
  const r = await box.exec(argv);
  if (r.exitCode !== 0) throw new Error(`${argv.join(' ')} in the box: exit ${r.exitCode}: ${String(r.all)}`);
  return String(r.stdout);
}

function labOrFail(ctx: unknown): FleetLab {
  const lab = requireFleetLab(fx.result(), ctx);
  if (unavailable) throw new Error(`the Debian 12 boxes cannot run here: ${unavailable}`);
  return lab;
}

function inventory(lab: FleetLab): string {
  const dir = controllerDir(path.join(lab.dir, 'controller'));
  const file = path.join(dir, 'inventory-server.ini');
  const [h1, h2] = lab.hosts;
  fs.writeFileSync(
    file,
    [
      '[boxes]',
      `h1 ansible_host=${h1!.addr}`,
      `h2 ansible_host=${h2!.addr}`,
      '',
      '[boxes:vars]',
      'ansible_user=root',
      'ansible_python_interpreter=/usr/bin/python3',
      `ansible_ssh_private_key_file=${lab.clientKey}`,
      "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR'",
      `agyctl_artifact_dir=${release!.dir}`,
      `agyctl_user=${USER}`,
      '',
    ].join('\n'),
  );
  return file;
}

/** The `server` playbook with one build (and more variables), from the laptop. */
function rollOut(
  lab: FleetLab,
  build: Build,
  extra: Record<string, unknown> = {},
  args: string[] = [],
): Promise<PlayRun> {
  const dir = controllerDir(path.join(lab.dir, 'controller'));
  const vars = { agyctl_server_archive: build.file, agyctl_server_sha256: build.sum, ...extra };
  return ansiblePlay(
    { run: lab.run, ns: lab.laptop, dir, inventory: inventory(lab), timeoutMs: 600_000 },
    path.join(PLAYBOOKS, 'server.yml'),
    ['-e', JSON.stringify(vars), ...args],
  );
}

/** The lines Ansible printed for one of the role's tasks, every time it ran (serial: once per batch). */
function task(out: string, name: string): string {
  const parts: string[] = [];
  let at = out.indexOf(`TASK [agyctl.fleet.agyctl : ${name}]`);
  while (at >= 0) {
    const end = out.indexOf('\nTASK [', at + 1);
    const stop = Math.min(
      end < 0 ? out.length : end,
      out.indexOf('\nPLAY', at + 1) < 0 ? out.length : out.indexOf('\nPLAY', at + 1),
    );
    parts.push(out.slice(at, stop));
    at = out.indexOf(`TASK [agyctl.fleet.agyctl : ${name}]`, at + 1);
  }
  return parts.join('\n');
}

const current = (box: SystemdBox): string => fs.readlinkSync(`${box.root}${STORE}/current`);
const versions = (box: SystemdBox): string[] =>
  fs
    .readdirSync(`${box.root}${STORE}`)
    .filter((n) => /^\d/.test(n))
    .sort();

async function scrape(lab: FleetLab, addr: string): Promise<string> {
  const r = await execa(
    'nsenter',
    [
      `--net=/run/netns/${lab.laptop}`,
      process.execPath,
      '-e',
      `fetch('http://${addr}:9100/metrics').then(r => r.text()).then(t => process.stdout.write(t))`,
    ],
    { reject: false, timeout: 30_000 },
  );
  if (r.exitCode !== 0) throw new Error(`scraping ${addr}:9100: ${String(r.stderr)}`);
  return String(r.stdout);
}

/** Signed in (a token the simulator accepts), owned by the service user. */
async function signIn(box: SystemdBox): Promise<void> {
  fs.mkdirSync(`${box.root}${STATE}`, { recursive: true, mode: 0o700 });
  fs.writeFileSync(
    `${box.root}${STATE}/acp_token.json`,
    JSON.stringify({ access_token: 'a', refresh_token: 'r', expiry_date: Date.now() + 3_600_000 }),
    { mode: 0o600 },
  );
  await must(box, ['chown', '-R', `${USER}:${USER}`, `/home/${USER}/.gemini`]);
}

describe('the role installs the server on Debian 12 boxes, host by host', () => {
  it(
    'rolls two versions out with serial 1 from the controller; the check unit runs the installed one; metrics',
    async (ctx) => {
      const lab = labOrFail(ctx);
      for (const h of lab.hosts) {
        const box = boxes.get(h.name)!;
        expect((await ip(['-n', h.ns, 'route', 'show', 'default'])).out).toBe('');
        // No server on the box's PATH: only the installed one can answer.
        expect(
          (await box.exec(['sh', '-c', 'command -v agy_acp_server agy_acp_server.par antigravity-acp'])).exitCode,
        ).not.toBe(0);
      }
      const first = await rollOut(lab, builds.v1);
      expect(first.code, first.out).toBe(0);
      // Host by host: one batch per host, h1's before h2's.
      expect(first.out.match(/^PLAY \[Roll out the antigravity-acp server\]/gm), first.out).toHaveLength(2);
      const installed = task(first.out, 'Install, switch to and prove the server (rolled back when the proof fails)');
      expect(installed, first.out).toMatch(/^changed: \[h1\][\s\S]*^changed: \[h2\]$/m);
      for (const box of boxes.values()) {
        expect(current(box)).toBe('1.0.0');
        const unit = fs.readFileSync(`${box.root}/etc/systemd/system/agyctl-check.service`, 'utf8');
        expect(unit).toContain(`\nEnvironment="AGYCTL_SERVER=${SERVER_LINE}"\n`);
        // The copy is gone; the tree is root's.
        expect(fs.readdirSync(`${box.root}/var/cache/agyctl/servers`)).toEqual([]);
        expect(fs.statSync(`${box.root}${STORE}/1.0.0/agy_acp_server.par`).uid).toBe(0);
      }

      // Signed in now: the proof of the next version includes check --live as agy.
      for (const box of boxes.values()) await signIn(box);
      const second = await rollOut(lab, builds.v2);
      expect(second.code, second.out).toBe(0);
      for (const [name, box] of boxes) {
        expect(current(box)).toBe('2.0.0');
        expect(versions(box)).toEqual(['1.0.0', '2.0.0']);
        const started = await box.exec(['systemctl', 'start', 'agyctl-check.service'], { timeoutMs: 180_000 });
        const journal = await box.exec(['journalctl', '--no-pager', '-u', 'agyctl-check.service']);
        expect(started.exitCode, `${name}: ${String(started.all)}\n${String(journal.all)}`).toBe(0);
        const text = await scrape(lab, lab.host(name).addr);
        expect(series(text, 'agyctl_check_ok').get(''), `${text}\n${String(journal.all)}`).toBe(1);
        expect(series(text, 'agyctl_server_info').get('{name="antigravity-acp",version="2.0.0"}'), text).toBe(1);
        const at = series(text, 'agyctl_server_last_install_timestamp_seconds').get('{name="antigravity-acp"}');
        expect(Math.abs(Date.now() / 1000 - (at ?? 0))).toBeLessThan(900);
        expect(series(text, 'node_textfile_scrape_error').get(''), text).toBe(0);
      }

      const again = await rollOut(lab, builds.v2);
      for (const h of lab.hosts) expect(again.recap.get(h.name), again.out).toMatchObject({ changed: 0, failed: 0 });
    },
    ROLLOUT_TEST_MS,
  );

  it(
    'a build that fails its proof is rolled back on the first host and stops the play before the second',
    async (ctx) => {
      const lab = labOrFail(ctx);
      const h1 = boxes.get('h1')!;
      const h2 = boxes.get('h2')!;
      const r = await rollOut(lab, builds.v3);
      expect(r.code, r.out).not.toBe(0);
      expect(r.recap.get('h1'), r.out).toMatchObject({ failed: 1 });
      expect(r.out).toMatch(
        /agyctl server install 3\.0\.0 failed \(exit 4\): The proof of version 3\.0\.0 failed at initialize[^\n]*version 2\.0\.0 is back in use/,
      );
      // h2 was never reached: no task ran there, and it kept its version.
      expect(r.out, r.out).not.toMatch(/^(ok|changed|failed|fatal|skipping): \[h2\]/m);
      expect(r.recap.get('h2')?.changed ?? 0, r.out).toBe(0);
      expect(current(h1)).toBe('2.0.0');
      expect(versions(h1)).toEqual(['1.0.0', '2.0.0']);
      expect(current(h2)).toBe('2.0.0');
      expect(fs.readdirSync(`${h1.root}/var/cache/agyctl/servers`)).toEqual([]);
      const text = await scrape(lab, lab.host('h1').addr);
      expect(series(text, 'agyctl_server_info').get('{name="antigravity-acp",version="2.0.0"}'), text).toBe(1);
    },
    PLAY_TEST_MS,
  );

  it(
    'back to an installed version with `server use`; Prometheus holds the version-skew alert while the boxes differ',
    async (ctx) => {
      const lab = labOrFail(ctx);
      const h1 = boxes.get('h1')!;
      const h2 = boxes.get('h2')!;
      const back = await rollOut(lab, builds.v1, { agyctl_server_keep: 1 }, ['--limit', 'h1']);
      expect(back.code, back.out).toBe(0);
      expect(task(back.out, 'Switch to the server version already installed (and prove it)'), back.out).toMatch(
        /^changed: \[h1\]$/m,
      );
      expect(current(h1)).toBe('1.0.0');
      expect(versions(h1)).toEqual(['1.0.0']);
      expect(current(h2)).toBe('2.0.0');

      // Each box's textfile directory, as its node_exporter reads it, served to a Prometheus with the shipped rules.
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-skew-'));
      const copies = new Map<string, string>();
      const refresh = (): void => {
        for (const [name, box] of boxes) {
          const dir = copies.get(name) ?? fs.mkdtempSync(path.join(scratch, `${name}-`));
          copies.set(name, dir);
          const tmp = path.join(dir, '.agyctl_server.prom');
          fs.copyFileSync(`${box.root}${TEXTFILE}/agyctl_server.prom`, tmp);
          fs.chmodSync(tmp, 0o644);
          fs.renameSync(tmp, path.join(dir, 'agyctl_server.prom'));
        }
      };
      refresh();
      fs.chmodSync(scratch, 0o755);
      const exporters = new Map<string, Daemon>();
      for (const [name, dir] of copies) {
        fs.chmodSync(dir, 0o755);
        const d = await startNodeExporter(dir, undefined, 600_000);
        daemons.push(d);
        exporters.set(name, d);
      }
      const config = path.join(scratch, 'prometheus.yml');
      fs.writeFileSync(
        config,
        [
          'global: {scrape_interval: 1s, evaluation_interval: 1s}',
          `rule_files: [${JSON.stringify(path.join(ROOT, 'ansible', 'prometheus', 'agyctl-alerts.yml'))}]`,
          'scrape_configs:',
          '  - job_name: node',
          '    static_configs:',
          ...[...exporters].map(([name, d]) => `      - {targets: ["127.0.0.1:${d.port}"], labels: {box: ${name}}}`),
          '',
        ].join('\n'),
      );
      const prom = await startDaemon(
        PROMETHEUS!,
        (port) => [
          `--config.file=${config}`,
          `--storage.tsdb.path=${path.join(scratch, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--storage.tsdb.retention.time=1h',
        ],
        /Server is ready to receive web requests/,
        600_000,
      );
      daemons.push(prom);
      const skew = async (): Promise<{ state: string; labels: Record<string, string> } | undefined> => {
        const res = await fetch(`${prom.base}/api/v1/alerts`);
        const body = (await res.json()) as {
          data: { alerts: Array<{ state: string; labels: Record<string, string> }> };
        };
        return body.data.alerts.find((a) => a.labels.alertname === 'AgyctlServerVersionSkew');
      };
      const active = await until('the version-skew alert', 60_000, skew, QUERY_EVERY_MS);
      // Pending: it fires only after a day of skew.
      expect(active.state).toBe('pending');
      expect(active.labels).toMatchObject({ name: 'antigravity-acp', severity: 'warning' });

      // The rollout finished: one version again, and the alert is gone.
      const rest = await rollOut(lab, builds.v1, { agyctl_server_keep: 1 }, ['--limit', 'h2']);
      expect(rest.code, rest.out).toBe(0);
      expect(current(h2)).toBe('1.0.0');
      refresh();
      await until(
        'the version-skew alert to clear',
        60_000,
        async () => {
          const alert = await skew();
          return alert === undefined || alert.state === 'inactive' ? true : undefined;
        },
        QUERY_EVERY_MS,
      );
      fs.rmSync(scratch, { recursive: true, force: true });
    },
    PLAY_TEST_MS,
  );
});
