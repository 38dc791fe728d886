/**
 * The role installs agyctl the way a fleet gets it, onto stock Debian 12
 * boxes with a real systemd and no Node: two debootstrap boxes booted with
 * systemd-nspawn inside two hosts of the fleet lab (their only link is to
 * the laptop; no route to any registry). Ansible on the laptop installs the
 * .deb on one and the single executable on the other from release files on
 * the controller only; then `systemctl start` runs the check and backup
 * units as the role wrote them (sandboxed, as the service user), and each
 * box's own node_exporter (Debian's, started by its systemd) serves their
 * samples. The check is the unit's own, --live: the server is the simulator
 * (Node code, so with its own Node), bound read-only from outside the box at
 * /opt/agy-sim and linked as /usr/local/bin/agy_acp_server; agyctl and the
 * box have no Node. The boxes' node_exporters read different textfile directories
 * (Debian's default; one set in /etc/default as prometheus.prometheus's role
 * does), which the role finds by itself.
 *
 * Release files: release/ when `npm run release` made them, else stand-ins
 * (test/helpers/release-artifacts.ts) that carry their own Node.
 *
 * @module-tag root
 * @module-tag ansible
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ansiblePlay, controllerDir, PLAYBOOKS, type PlayRun } from '../../helpers/ansible-play.js';
import { ROOT, SIM } from '../../helpers/cli.js';
import { type FleetLab, requireFleetLab, useFleetLab } from '../../helpers/fleet-lab.js';
import { series } from '../../helpers/loopback-daemon.js';
import { ip, which } from '../../helpers/ns-lab.js';
import {
  copyApp,
  type ReleaseFiles,
  releaseFiles,
  withBrokenBinding,
  writeSums,
} from '../../helpers/release-artifacts.js';
import { bootSystemdBox, debianSystemdTree, type SystemdBox } from '../../helpers/systemd-box.js';

const fx = useFleetLab({ hosts: 2 });
const PLAY_TEST_MS = 400_000;
/** The service user on the boxes. */
const USER = 'agy';
const STATE = `/home/${USER}/.gemini/antigravity-acp`;
const SESSION = '0000000a-0000-4000-8000-000000000000';
const SIM_DIR = '/opt/agy-sim';

let release: ReleaseFiles | undefined;
let unavailable: string | undefined;
const boxes = new Map<string, SystemdBox>();

beforeAll(async () => {
  if (!which('ansible-playbook'))
    throw new Error('ansible-playbook is not installed; .ci/run installs it: apt-get install ansible-core');
  const lab = fx.result()?.lab;
  if (!lab) return;
  const { tree, unavailable: why } = await debianSystemdTree();
  if (!tree) {
    unavailable = why;
    return;
  }
  release = await releaseFiles(path.join(lab.dir, 'artifacts'));
  fs.copyFileSync(`${lab.clientKey}.pub`, path.join(lab.dir, 'authorized_keys'));
  // The server: the simulator with the Node that runs it, bound read-only from outside the box (not on its PATH).
  const sim = path.join(lab.dir, 'sim');
  await copyApp(path.join(sim, 'app'));
  fs.copyFileSync(process.execPath, path.join(sim, 'node'));
  fs.chmodSync(sim, 0o755);
  fs.writeFileSync(
    path.join(sim, 'agy_acp_server'),
    `#!/bin/sh\nexec ${SIM_DIR}/node ${SIM_DIR}/app/${path.relative(ROOT, SIM)} "$@"\n`,
    { mode: 0o755 },
  );
  for (const h of lab.hosts) {
    // The box's sshd takes the lab host's address.
    await h.stopSshd();
    const box = await bootSystemdBox({
      tree,
      netns: h.ns,
      name: `agyctl-${h.name}-${process.pid}`,
      dir: path.join(lab.dir, `box-${h.name}`),
      bindRo: [
        [path.join(lab.dir, 'authorized_keys'), '/root/.ssh/authorized_keys'],
        [sim, SIM_DIR],
      ],
    });
    boxes.set(h.name, box);
    await must(box, ['useradd', '--create-home', '--shell', '/bin/bash', USER]);
    await must(box, ['ln', '-s', `${SIM_DIR}/agy_acp_server`, '/usr/local/bin/agy_acp_server']);
  }
  // h2's node_exporter reads the directory prometheus.prometheus's role gives it, through Debian's defaults file.
  const h2 = boxes.get('h2')!;
  fs.writeFileSync(
    `${h2.root}/etc/default/prometheus-node-exporter`,
    'ARGS="--collector.textfile.directory=/var/lib/node_exporter"\n',
  );
  await must(h2, ['mkdir', '-p', '/var/lib/node_exporter']);
  await must(h2, ['systemctl', 'restart', 'prometheus-node-exporter']);
}, 1_200_000);

afterAll(async () => {
  for (const box of boxes.values()) await box.stop();
}, 120_000);

async function must(box: SystemdBox, argv: string[]): Promise<string> {
  const r = await box.exec(argv);
  if (r.exitCode !== 0) throw new Error(`${argv.join(' ')} in the box: exit ${r.exitCode}: ${String(r.all)}`);
  return String(r.stdout);
}

/** The lab with its Debian tree, or a failure naming what is missing (never a skip). */
function labOrFail(ctx: unknown): FleetLab {
  const lab = requireFleetLab(fx.result(), ctx);
  if (unavailable) throw new Error(`the Debian 12 boxes cannot run here: ${unavailable}`);
  return lab;
}

function inventory(lab: FleetLab, artifacts: string): string {
  const dir = controllerDir(path.join(lab.dir, 'controller'));
  const file = path.join(dir, `inventory-${path.basename(artifacts)}.ini`);
  const [h1, h2] = lab.hosts;
  fs.writeFileSync(
    file,
    [
      '[boxes]',
      `h1 ansible_host=${h1!.addr} agyctl_install=deb`,
      `h2 ansible_host=${h2!.addr} agyctl_install=binary`,
      '',
      '[boxes:vars]',
      'ansible_user=root',
      'ansible_python_interpreter=/usr/bin/python3',
      `ansible_ssh_private_key_file=${lab.clientKey}`,
      "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR'",
      'ansible_become_method=su',
      `agyctl_artifact_dir=${artifacts}`,
      `agyctl_user=${USER}`,
      '',
    ].join('\n'),
  );
  return file;
}

function play(lab: FleetLab, extra: string[] = [], artifacts = release!.dir): Promise<PlayRun> {
  const dir = controllerDir(path.join(lab.dir, 'controller'));
  return ansiblePlay(
    { run: lab.run, ns: lab.laptop, dir, inventory: inventory(lab, artifacts), timeoutMs: 300_000 },
    path.join(PLAYBOOKS, 'site.yml'),
    extra,
  );
}

/** node_exporter's page on a lab host's address, fetched from the laptop. */
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

/** The lines Ansible printed for one of the role's tasks. */
function task(out: string, name: string): string {
  const at = out.indexOf(`TASK [agyctl.fleet.agyctl : ${name}]`);
  if (at < 0) return '';
  const end = out.indexOf('\nTASK [', at + 1);
  return out.slice(at, end < 0 ? undefined : end);
}

/** Signed in, with one conversation on the box, owned by the service user. */
async function giveState(lab: FleetLab, box: SystemdBox): Promise<void> {
  const conv = `${box.root}${STATE}/conversations`;
  fs.mkdirSync(conv, { recursive: true, mode: 0o700 });
  fs.writeFileSync(
    `${box.root}${STATE}/acp_token.json`,
    JSON.stringify({ access_token: 'a', refresh_token: 'r', expiry_date: Date.now() + 3_600_000 }),
    { mode: 0o600 },
  );
  // Made outside and copied in: SQLite resolves the /proc/<pid>/root link to the host's own /.
  const made = path.join(lab.dir, `${SESSION}.db`);
  fs.rmSync(made, { force: true });
  const db = new Database(made);
  db.exec("CREATE TABLE steps (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO steps (body) VALUES ('hello');");
  db.close();
  fs.copyFileSync(made, path.join(conv, `${SESSION}.db`));
  fs.writeFileSync(path.join(conv, `${SESSION}.meta`), JSON.stringify({ cwd: `/home/${USER}` }));
  await must(box, ['chown', '-R', `${USER}:${USER}`, `/home/${USER}/.gemini`]);
}

const TEXTFILE = { h1: '/var/lib/prometheus/node-exporter', h2: '/var/lib/node_exporter' } as const;

describe('the role on Debian 12 boxes with systemd and no Node', () => {
  it(
    'installs the .deb and the executable from the controller, and the timers’ units write metrics node_exporter serves',
    async (ctx) => {
      const lab = labOrFail(ctx);
      for (const h of lab.hosts) {
        const box = boxes.get(h.name)!;
        // No Node on the box, and no route off the lab link.
        expect((await box.exec(['sh', '-c', 'command -v node nodejs npm'])).exitCode).not.toBe(0);
        expect((await ip(['-n', h.ns, 'route', 'show', 'default'])).out).toBe('');
      }
      const first = await play(lab);
      expect(first.code, first.out).toBe(0);
      for (const h of lab.hosts) expect(first.recap.get(h.name), first.out).toMatchObject({ failed: 0 });
      expect(task(first.out, 'Install the .deb'), first.out).toMatch(/^changed: \[h1\]$/m);
      expect(task(first.out, 'Install the single executable'), first.out).toMatch(/^changed: \[h2\]$/m);

      const h1 = boxes.get('h1')!;
      const h2 = boxes.get('h2')!;
      expect(await must(h1, ['dpkg-query', '-W', '-f', '${Version}', 'agyctl'])).toBe(release!.version);
      expect(fs.statSync(`${h2.root}/usr/local/bin/agyctl`).mode & 0o777).toBe(0o755);
      for (const [name, box] of boxes) {
        const bin = name === 'h1' ? '/usr/bin/agyctl' : '/usr/local/bin/agyctl';
        expect((await box.exec([bin, 'version'])).exitCode).toBe(0);
        const unit = fs.readFileSync(`${box.root}/etc/systemd/system/agyctl-check.service`, 'utf8');
        expect(unit).toMatch(
          new RegExp(
            `^ExecStart=${bin} check --live --timeout 90s --prometheus ${TEXTFILE[name as 'h1']}/agyctl/agyctl\\.prom$`,
            'm',
          ),
        );
        expect(unit).toMatch(/^User=agy$/m);
        expect(await must(box, ['systemctl', 'is-enabled', 'agyctl-check.timer', 'agyctl-backup.timer'])).toBe(
          'enabled\nenabled',
        );
      }

      for (const [name, box] of boxes) {
        await giveState(lab, box);
        for (const unit of ['agyctl-check.service', 'agyctl-backup.service']) {
          const started = await box.exec(['systemctl', 'start', unit], { timeoutMs: 180_000 });
          const journal = await box.exec(['journalctl', '--no-pager', '-u', unit]);
          expect(started.exitCode, `${name} ${unit}: ${String(started.all)}\n${String(journal.all)}`).toBe(0);
          const shown = await must(box, ['systemctl', 'show', unit, '-p', 'Result,ExecMainStatus,User,ProtectSystem']);
          expect(shown, String(journal.all)).toMatch(/^Result=success$/m);
          expect(shown).toMatch(/^User=agy$/m);
          expect(shown).toMatch(/^ProtectSystem=strict$/m);
        }
        const metrics = `${box.root}${TEXTFILE[name as 'h1']}/agyctl`;
        const uid = Number(await must(box, ['id', '-u', USER]));
        expect(fs.statSync(path.join(metrics, 'agyctl.prom')).uid).toBe(uid);
        expect(fs.statSync(path.join(metrics, 'agyctl_backup.prom')).uid).toBe(uid);
        const snaps = fs.readdirSync(`${box.root}/home/${USER}/.local/state/agyctl/backups`);
        expect(snaps.filter((n) => /^\d{4}-/.test(n))).toHaveLength(1);

        const text = await scrape(lab, lab.host(name).addr);
        expect(series(text, 'node_textfile_scrape_error').get(''), text).toBe(0);
        expect(series(text, 'agyctl_check_ok').get(''), text).toBe(1);
        expect(series(text, 'agyctl_backup_ok').get(''), text).toBe(1);
        expect(series(text, 'agyctl_check_schedule_interval_seconds').get('')).toBe(300);
      }

      const again = await play(lab);
      for (const h of lab.hosts) expect(again.recap.get(h.name), again.out).toMatchObject({ changed: 0, failed: 0 });
    },
    PLAY_TEST_MS * 2,
  );

  it(
    'an agyctl whose SQLite binding cannot load passes --version, fails the health check, and is reinstalled',
    async (ctx) => {
      const lab = labOrFail(ctx);
      const box = boxes.get('h1')!;
      if (release!.standInBinding) {
        // The stand-in's real binding, damaged: `--version` still answers, every use of SQLite fails.
        fs.writeFileSync(`${box.root}${release!.standInBinding}`, 'not an ELF file');
      } else {
        // The release's executable carries its binding, written out to load: damaged inside the executable.
        const exe = `${box.root}/usr/bin/agyctl`;
        fs.writeFileSync(exe, withBrokenBinding(fs.readFileSync(exe)));
      }
      expect(String((await box.exec(['/usr/bin/agyctl', '--version'])).stdout).trim()).toBe(release!.version);
      const broken = await box.exec(['/usr/bin/agyctl', 'version']);
      expect(broken.exitCode).toBe(1);
      expect(String(broken.stderr)).toMatch(/cannot load the SQLite binding/i);
      const r = await play(lab, ['--limit', 'h1']);
      expect(r.code, r.out).toBe(0);
      expect(task(r.out, 'Install the .deb'), r.out).toMatch(/^changed: \[h1\]$/m);
      const healed = await box.exec(['/usr/bin/agyctl', 'version']);
      expect(healed.exitCode, String(healed.all)).toBe(0);
    },
    PLAY_TEST_MS,
  );

  it(
    'a release file that does not match SHA256SUMS fails on the controller, before anything is copied',
    async (ctx) => {
      const lab = labOrFail(ctx);
      const tampered = path.join(lab.dir, 'tampered');
      fs.mkdirSync(tampered, { recursive: true });
      const deb = path.basename(release!.deb);
      fs.writeFileSync(path.join(tampered, deb), 'not the release');
      writeSums(tampered, [deb]);
      fs.appendFileSync(path.join(tampered, deb), '!');
      const box = boxes.get('h1')!;
      const before = await must(box, ['sha256sum', `/var/cache/agyctl/${deb}`]);
      const r = await play(lab, ['--limit', 'h1'], tampered);
      expect(r.recap.get('h1'), r.out).toMatchObject({ failed: 1 });
      expect(r.out).toMatch(
        new RegExp(
          `${tampered}/${deb.replace(/\./g, '\\.')} does not match SHA256SUMS \\(sha256 [0-9a-f]{64}, listed [0-9a-f]{64}\\)`,
        ),
      );
      expect(await must(box, ['sha256sum', `/var/cache/agyctl/${deb}`])).toBe(before);
    },
    PLAY_TEST_MS,
  );

  it(
    'the textfile directory: one no collector reads fails the host; npm installs name what the box lacks',
    async (ctx) => {
      const lab = labOrFail(ctx);
      const failsH1 = async (vars: Record<string, string>): Promise<string> => {
        const r = await play(lab, ['--limit', 'h1', '-e', JSON.stringify(vars)]);
        expect(r.recap.get('h1'), r.out).toMatchObject({ failed: 1 });
        return r.out;
      };
      expect(await failsH1({ agyctl_textfile_dir: TEXTFILE.h2 })).toMatch(
        /agyctl_textfile_dir is \/var\/lib\/node_exporter, which no node_exporter on this host reads \(process \d+ reads \/var\/lib\/prometheus\/node-exporter\): agyctl's metrics would be lost/,
      );
      expect(await failsH1({ agyctl_install: 'registry', agyctl_bin: '/usr/local/bin/agyctl' })).toMatch(
        /agyctl_install=registry needs on the host: Node >= 20\.10\.0 \(none found\), npm, make, g\+\+; install them, or use agyctl_install=deb or binary/,
      );
    },
    PLAY_TEST_MS,
  );
});
