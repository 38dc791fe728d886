/**
 * The agyctl.fleet Ansible collection against the fleet lab: Debian's
 * ansible-core runs in the laptop namespace and reaches three hosts over
 * real OpenSSH; the modules run under the hosts' /usr/bin/python3 and call
 * the built agyctl there. systemd does not run the lab, so the role writes
 * the unit files (into a per-host directory) and does not talk to systemd.
 * A missing ansible-playbook is a failure, not a skip: .ci/run installs it.
 *
 * @module-tag root
 * @module-tag ansible
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { ansiblePlay, controllerDir, PLAYBOOKS, type PlayRun } from '../../helpers/ansible-play.js';
import { BIN, ROOT, SIM } from '../../helpers/cli.js';
import { type FleetLab, requireFleetLab, useFleetLab } from '../../helpers/fleet-lab.js';
import { type Daemon, NODE_EXPORTER as EXPORTER, series, startNodeExporter } from '../../helpers/loopback-daemon.js';
import { which } from '../../helpers/ns-lab.js';
import { copyApp, writeSums } from '../../helpers/release-artifacts.js';

const fx = useFleetLab({ hosts: 3 });
/** Up to three playbook runs per test, on a loaded 2-core CI box. */
const PLAY_TEST_MS = 400_000;

let controller = '';
let exporter: Daemon | undefined;
/** The unprivileged user the non-root test runs agyctl as (Debian's nobody:nogroup). */
const NOBODY = 65534;
const NOGROUP = 65534;

beforeAll(() => {
  if (!which('ansible-playbook'))
    throw new Error('ansible-playbook is not installed; .ci/run installs it: apt-get install ansible-core');
});

/** The controller's directory and inventory: the lab's hosts, agyctl already there, no systemd running them. */
function setUp(lab: FleetLab): string {
  if (controller) return controller;
  controller = controllerDir(path.join(lab.dir, 'controller'));
  const lines = ['[agy]'];
  for (const h of lab.hosts) {
    fs.mkdirSync(path.join(h.dir, 'systemd'), { recursive: true });
    lines.push(
      `${h.name} agyctl_bin=${h.bin}/agyctl agyctl_systemd_dir=${h.dir}/systemd agyctl_textfile_dir=${h.dir}/textfile`,
    );
  }
  lines.push(
    '',
    '[agy:vars]',
    'ansible_python_interpreter=/usr/bin/python3',
    'agyctl_install=none',
    'agyctl_systemd=false',
    // The lab shares this machine's processes and files: no node_exporter reads the hosts' textfile directories.
    'agyctl_textfile_check=false',
    '',
  );
  fs.writeFileSync(path.join(controller, 'inventory.ini'), lines.join('\n'));
  return controller;
}

function play(lab: FleetLab, playbook: string, extra: string[] = []): Promise<PlayRun> {
  const dir = setUp(lab);
  return ansiblePlay(
    { run: lab.run, ns: lab.laptop, dir, inventory: path.join(dir, 'inventory.ini'), pathPrefix: lab.sshBin },
    playbook,
    extra,
  );
}

const settingsOf = (lab: FleetLab, name: string): string => path.join(lab.host(name).stateDir, 'settings.json');
const unitOf = (lab: FleetLab, name: string, unit: string): string => path.join(lab.host(name).dir, 'systemd', unit);

/** `systemd-analyze security --offline=true` of a unit file: its overall exposure (0 safest .. 10). */
async function exposure(lab: FleetLab, unit: string): Promise<{ score: number; out: string }> {
  const r = await lab.run(lab.laptop, 'systemd-analyze', ['security', '--offline=true', '--no-pager', unit], {
    timeoutMs: 60_000,
  });
  const out = `${String(r.stdout)}\n${String(r.stderr)}`;
  const m = /Overall exposure level for \S+: (\d+(?:\.\d+)?) (\S+)/.exec(out);
  if (!m) throw new Error(`systemd-analyze security said no score for ${unit}: ${out}`);
  return { score: Number(m[1]), out };
}

function execStart(file: string): string {
  return /^ExecStart=(.*)$/m.exec(fs.readFileSync(file, 'utf8'))?.[1] ?? '';
}

function giveToken(lab: FleetLab, name: string): void {
  const dir = lab.host(name).stateDir;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(
    path.join(dir, 'acp_token.json'),
    JSON.stringify({ access_token: 'a', refresh_token: 'r', expiry_date: Date.now() + 3_600_000 }),
    { mode: 0o600 },
  );
}

describe('the agyctl.fleet collection against three SSH hosts', () => {
  it(
    'site.yml --check on fresh hosts predicts changes and changes nothing',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const r = await play(lab, path.join(PLAYBOOKS, 'site.yml'), ['--check']);
      expect(r.code, r.out).toBe(0);
      for (const h of lab.hosts) {
        expect(r.recap.get(h.name), r.out).toMatchObject({ failed: 0, unreachable: 0 });
        expect(r.recap.get(h.name)!.changed).toBeGreaterThan(0);
        expect(fs.existsSync(settingsOf(lab, h.name))).toBe(false);
        expect(fs.readdirSync(path.join(h.dir, 'systemd'))).toEqual([]);
        expect(fs.existsSync(path.join(h.dir, 'textfile'))).toBe(false);
      }
    },
    PLAY_TEST_MS,
  );

  it(
    'site.yml writes settings and the timer units on every host; a second run changes nothing',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const first = await play(lab, path.join(PLAYBOOKS, 'site.yml'));
      expect(first.code, first.out).toBe(0);
      for (const h of lab.hosts) {
        expect(first.recap.get(h.name), first.out).toMatchObject({ failed: 0, unreachable: 0 });
        expect(JSON.parse(fs.readFileSync(settingsOf(lab, h.name), 'utf8'))).toMatchObject({
          auth: { type: 'oauth-personal' },
        });
        expect(execStart(unitOf(lab, h.name, 'agyctl-check.service'))).toBe(
          `${h.bin}/agyctl check --live --timeout 90s --prometheus ${h.dir}/textfile/agyctl/agyctl.prom`,
        );
        // Backup metrics are on by default where the backup timer is installed.
        expect(execStart(unitOf(lab, h.name, 'agyctl-backup.service'))).toBe(
          `${h.bin}/agyctl backup --keep-last 48 --keep-daily 14 --keep-weekly 8 --prometheus ${h.dir}/textfile/agyctl/agyctl_backup.prom`,
        );
        expect(fs.readlinkSync(path.join(h.dir, 'textfile', 'agyctl_backup.prom'))).toBe(
          `${h.dir}/textfile/agyctl/agyctl_backup.prom`,
        );
        const check = fs.readFileSync(unitOf(lab, h.name, 'agyctl-check.service'), 'utf8');
        expect(check).toMatch(/^User=root$/m);
        expect(check).toContain(`Environment=HOME=${h.home}\n`);
        expect(check).toMatch(/^SuccessExitStatus=3 4 5 6$/m);
        expect(fs.readFileSync(unitOf(lab, h.name, 'agyctl-check.timer'), 'utf8')).toMatch(/^OnUnitActiveSec=5min$/m);
        expect(fs.readFileSync(unitOf(lab, h.name, 'agyctl-backup.timer'), 'utf8')).toMatch(/^OnCalendar=hourly$/m);
        // The textfile directory is root's; agyctl writes its own subdirectory, linked from there.
        expect(fs.statSync(path.join(h.dir, 'textfile')).isDirectory()).toBe(true);
        expect(fs.readlinkSync(path.join(h.dir, 'textfile', 'agyctl.prom'))).toBe(
          `${h.dir}/textfile/agyctl/agyctl.prom`,
        );
        expect(fs.readFileSync(path.join(h.dir, 'textfile', 'agyctl_schedule.prom'), 'utf8')).toMatch(
          /^agyctl_check_schedule_interval_seconds 300$[\s\S]*^agyctl_backup_schedule_max_gap_seconds 3600$/m,
        );
      }
      // Sandboxed: systemd's own score, OK (<= 2.0) for both services; write access only where they write.
      const h1 = lab.host('h1');
      for (const unit of ['agyctl-check.service', 'agyctl-backup.service']) {
        const { score, out } = await exposure(lab, unitOf(lab, 'h1', unit));
        expect(score, out).toBeLessThanOrEqual(2.0);
        const text = fs.readFileSync(unitOf(lab, 'h1', unit), 'utf8');
        expect(text).toMatch(/^UMask=0077$/m);
        expect(text).toMatch(/^ProtectSystem=strict$/m);
        expect(text).toMatch(/^TimeoutStartSec=(5min|1h)$/m);
      }
      expect(fs.readFileSync(unitOf(lab, 'h1', 'agyctl-check.service'), 'utf8')).toMatch(
        new RegExp(`^ReadWritePaths=${h1.stateDir} ${h1.dir}/textfile/agyctl$`, 'm'),
      );
      expect(fs.readFileSync(unitOf(lab, 'h1', 'agyctl-backup.service'), 'utf8')).toMatch(
        new RegExp(
          `^ReadWritePaths=${h1.stateDir} ${h1.home}/.local/state/agyctl/backups ${h1.dir}/textfile/agyctl$`,
          'm',
        ),
      );
      const second = await play(lab, path.join(PLAYBOOKS, 'site.yml'));
      expect(second.code, second.out).toBe(0);
      for (const h of lab.hosts) expect(second.recap.get(h.name), second.out).toMatchObject({ changed: 0, failed: 0 });
    },
    PLAY_TEST_MS,
  );

  it(
    '--check --diff shows a settings change and leaves every file as it was',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const before = lab.hosts.map((h) => fs.readFileSync(settingsOf(lab, h.name), 'utf8'));
      const r = await play(lab, path.join(PLAYBOOKS, 'site.yml'), [
        '--check',
        '--diff',
        '-e',
        'agyctl_auth_type=gemini-api-key',
      ]);
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(/-auth\.type: oauth-personal\n\+auth\.type: gemini-api-key/);
      for (const [i, h] of lab.hosts.entries()) {
        expect(r.recap.get(h.name), r.out).toMatchObject({ changed: 1, failed: 0 });
        expect(fs.readFileSync(settingsOf(lab, h.name), 'utf8')).toBe(before[i]);
      }
    },
    PLAY_TEST_MS,
  );

  it(
    "a malformed settings.json fails that host with agyctl's message and is left untouched",
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const broken = '{ "auth": { "type": "oauth-personal" }, oops }\n';
      fs.writeFileSync(settingsOf(lab, 'h2'), broken);
      try {
        const r = await play(lab, path.join(PLAYBOOKS, 'site.yml'), ['-e', 'agyctl_auth_type=gemini-api-key']);
        expect(r.code, r.out).not.toBe(0);
        expect(r.recap.get('h2'), r.out).toMatchObject({ failed: 1 });
        expect(r.out).toMatch(/fatal: \[h2\].*settings\.json: .*\(line 1, column \d+\)/);
        expect(fs.readFileSync(settingsOf(lab, 'h2'), 'utf8')).toBe(broken);
        expect(fs.readdirSync(lab.host('h2').stateDir).filter((n) => n.includes('.bak'))).toEqual([]);
        for (const name of ['h1', 'h3']) {
          expect(r.recap.get(name), r.out).toMatchObject({ failed: 0 });
          expect(JSON.parse(fs.readFileSync(settingsOf(lab, name), 'utf8'))).toMatchObject({
            auth: { type: 'gemini-api-key' },
          });
        }
      } finally {
        // Back to the state the other tests expect.
        fs.writeFileSync(settingsOf(lab, 'h2'), '{ "auth": { "type": "oauth-personal" } }\n');
        const r = await play(lab, path.join(PLAYBOOKS, 'site.yml'));
        expect(r.code, r.out).toBe(0);
      }
    },
    PLAY_TEST_MS,
  );

  it(
    'health.yml fails exactly the host whose token was removed, says why, and ends with the table',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      for (const h of lab.hosts) giveToken(lab, h.name);
      fs.rmSync(path.join(lab.host('h3').stateDir, 'acp_token.json'));
      const r = await play(lab, path.join(PLAYBOOKS, 'health.yml'));
      expect(r.code, r.out).toBe(2);
      expect(r.recap.get('h1'), r.out).toMatchObject({ failed: 0 });
      expect(r.recap.get('h2'), r.out).toMatchObject({ failed: 0 });
      expect(r.recap.get('h3'), r.out).toMatchObject({ failed: 1 });
      expect(r.out).toMatch(
        /fatal: \[h3\]: FAILED! => .*agyctl check: not-authenticated \(exit 3\): token-file: no token file \(.*acp_token\.json\): not logged in.*fix: .*agyctl login/,
      );
      expect(r.out).not.toMatch(/fatal: \[h[12]\]: FAILED! => \{"changed": false, "msg": "agyctl check/);
      // The table: one row per host, with status, exit code, token expiry and last backup.
      expect(r.out).toMatch(/"HOST +STATUS +EXIT +TOKEN EXPIRY +LAST BACKUP"/);
      expect(r.out).toMatch(/"h1 +ok +0 +in 5\dm +never"/);
      expect(r.out).toMatch(/"h3 +not-authenticated +3 +- +never"/);
    },
    PLAY_TEST_MS,
  );

  it(
    'backup.yml writes a snapshot on every host; health.yml then shows it',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      for (const h of lab.hosts) {
        const dir = path.join(h.stateDir, 'conversations');
        fs.mkdirSync(dir, { recursive: true });
        const id = `0000000${h.name.slice(1)}-0000-4000-8000-000000000000`;
        const db = new Database(path.join(dir, `${id}.db`));
        db.exec("CREATE TABLE steps (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO steps (body) VALUES ('hello');");
        db.close();
        fs.writeFileSync(path.join(dir, `${id}.meta`), JSON.stringify({ cwd: h.home }));
      }
      const r = await play(lab, path.join(PLAYBOOKS, 'backup.yml'), ['-e', 'agyctl_backup_keep_last=3']);
      expect(r.code, r.out).toBe(0);
      for (const h of lab.hosts) {
        expect(r.recap.get(h.name), r.out).toMatchObject({ changed: 1, failed: 0 });
        const backups = path.join(h.home, '.local', 'state', 'agyctl', 'backups');
        const snaps = fs.readdirSync(backups).filter((n) => /^\d{4}-/.test(n));
        expect(snaps).toHaveLength(1);
        const manifest = JSON.parse(fs.readFileSync(path.join(backups, snaps[0]!, 'manifest.json'), 'utf8')) as {
          sessions: Array<{ id: string }>;
        };
        expect(manifest.sessions.map((s) => s.id)).toEqual([`0000000${h.name.slice(1)}-0000-4000-8000-000000000000`]);
      }
      const health = await play(lab, path.join(PLAYBOOKS, 'health.yml'));
      expect(health.out).toMatch(/"h1 +ok +0 +in \d+m +\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z"/);
    },
    PLAY_TEST_MS,
  );

  it(
    "a failed session fails agyctl_backup with its name; the play's environment reaches agyctl",
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const h = lab.host('h1');
      const bad = '11111111-2222-4333-8444-555555555555';
      fs.writeFileSync(path.join(h.stateDir, 'conversations', `${bad}.db`), 'not a database at all, just text');
      const pb = path.join(setUp(lab), 'env-and-backup.yml');
      fs.writeFileSync(
        pb,
        [
          '- hosts: h1',
          '  gather_facts: false',
          '  tasks:',
          '    - agyctl.fleet.agyctl_check:',
          '      environment: { AGYCTL_STATE_DIR: /nonexistent/agy-state }',
          '      register: env_check',
          '      ignore_errors: true',
          '    - ansible.builtin.assert:',
          // agyctl refuses a --state-dir / AGYCTL_STATE_DIR that does not exist (exit 2), naming it: the variable arrived.
          '        that: ["env_check.rc == 2", "env_check.msg is search(\'/nonexistent/agy-state\')"]',
          '    - agyctl.fleet.agyctl_backup:',
          '',
        ].join('\n'),
      );
      const r = await play(lab, pb);
      try {
        expect(r.recap.get('h1'), r.out).toMatchObject({ failed: 1 });
        expect(r.out).toMatch(/ok: \[h1\] => \{\s*"changed": false,\s*"msg": "All assertions passed"/);
        expect(r.out).toMatch(
          new RegExp(
            `fatal: \\[h1\\]: FAILED! => .*agyctl backup: 1 session\\(s\\) could not be snapshotted: ${bad} \\(`,
          ),
        );
      } finally {
        fs.rmSync(path.join(h.stateDir, 'conversations', `${bad}.db`), { force: true });
      }
    },
    PLAY_TEST_MS,
  );

  it(
    'the role installs agyctl from a release tarball with npm, only when the version differs (and wires backup metrics when asked)',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const h = lab.host('h1');
      // npm is a stand-in here (the lab is offline): it records its arguments and installs a wrapper of the built agyctl.
      const stub = path.join(h.dir, 'npm-stub');
      const log = path.join(h.dir, 'npm.log');
      const wrapper = `#!/bin/sh\nexec ${process.execPath} ${path.join(ROOT, 'bin', 'agyctl.js')} "$@"\n`;
      fs.writeFileSync(path.join(h.dir, 'agyctl-wrapper'), wrapper, { mode: 0o755 });
      fs.writeFileSync(
        stub,
        `#!/bin/sh\necho "$@" >> ${log}\nmkdir -p "$4/bin"\ncp ${h.dir}/agyctl-wrapper "$4/bin/agyctl"\n`,
        { mode: 0o755 },
      );
      const tarball = path.join(setUp(lab), 'agyctl-0.1.0.tgz');
      fs.writeFileSync(tarball, 'a release tarball');
      writeSums(path.dirname(tarball), ['agyctl-0.1.0.tgz']);
      const prefix = path.join(h.dir, 'prefix');
      const vars = [
        '--limit',
        'h1',
        '-e',
        'agyctl_install=tarball',
        '-e',
        `agyctl_tarball=${tarball}`,
        '-e',
        `agyctl_npm=${stub}`,
        '-e',
        `agyctl_npm_prefix=${prefix}`,
        '-e',
        `agyctl_bin=${prefix}/bin/agyctl`,
        '-e',
        `agyctl_cache_dir=${h.dir}/cache`,
        '-e',
        'agyctl_backup_prometheus=true',
      ];
      const first = await play(lab, path.join(PLAYBOOKS, 'site.yml'), vars);
      expect(first.code, first.out).toBe(0);
      expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toEqual([
        `install --global --prefix ${prefix} ${h.dir}/cache/agyctl-0.1.0.tgz --allow-scripts=better-sqlite3`,
      ]);
      expect(fs.readFileSync(path.join(h.dir, 'cache', 'agyctl-0.1.0.tgz'), 'utf8')).toBe('a release tarball');
      expect(execStart(unitOf(lab, 'h1', 'agyctl-check.service'))).toMatch(new RegExp(`^${prefix}/bin/agyctl check `));
      // The backup metrics, once switched on, land beside the check's in the textfile directory.
      expect(execStart(unitOf(lab, 'h1', 'agyctl-backup.service'))).toBe(
        `${prefix}/bin/agyctl backup --keep-last 48 --keep-daily 14 --keep-weekly 8 --prometheus ${h.dir}/textfile/agyctl/agyctl_backup.prom`,
      );
      const second = await play(lab, path.join(PLAYBOOKS, 'site.yml'), vars);
      expect(second.recap.get('h1'), second.out).toMatchObject({ changed: 0, failed: 0 });
      expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
      // npm needs Node at the floor and a toolchain on the host: what is missing is named in one message, before npm runs.
      const lacking = await play(lab, path.join(PLAYBOOKS, 'site.yml'), [
        ...vars,
        '-e',
        `agyctl_bin=${h.dir}/elsewhere/bin/agyctl`,
        '-e',
        'agyctl_node_floor=99.0.0',
        '-e',
        '{"agyctl_toolchain": ["make", "agyctl-no-such-cc"]}',
      ]);
      expect(lacking.recap.get('h1'), lacking.out).toMatchObject({ failed: 1 });
      expect(lacking.out).toMatch(
        /agyctl_install=tarball needs on the host: Node >= 99\.0\.0 \(found 20\.[\d.]+\), agyctl-no-such-cc; install them, or use agyctl_install=deb or binary/,
      );
      expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
    },
    PLAY_TEST_MS,
  );
  it(
    'a backup calendar systemd cannot read, or a value the argument specs refuse, fails the host before anything is written',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const h = lab.host('h1');
      const units = path.join(h.dir, 'systemd-fresh');
      fs.mkdirSync(units);
      const calendar = await play(lab, path.join(PLAYBOOKS, 'site.yml'), [
        '--limit',
        'h1',
        '-e',
        `agyctl_systemd_dir=${units}`,
        '-e',
        'agyctl_backup_calendar="every tuesday"',
      ]);
      expect(calendar.code, calendar.out).not.toBe(0);
      expect(calendar.recap.get('h1'), calendar.out).toMatchObject({ failed: 1, changed: 0 });
      expect(calendar.out).toMatch(
        /fatal: \[h1\]: FAILED! => .*agyctl_backup_calendar is \\"every tuesday\\", which systemd cannot read \(Failed to parse calendar specification/,
      );
      expect(fs.readdirSync(units)).toEqual([]);
      const spec = await play(lab, path.join(PLAYBOOKS, 'site.yml'), [
        '--limit',
        'h1',
        '-e',
        `agyctl_systemd_dir=${units}`,
        '-e',
        'agyctl_auth_type=oauth-personnel',
      ]);
      expect(spec.recap.get('h1'), spec.out).toMatchObject({ failed: 1, changed: 0 });
      expect(spec.out).toMatch(/agyctl_auth_type.*must be one of: oauth-personal, gemini-api-key/);
      expect(fs.readdirSync(units)).toEqual([]);
      const spaced = await play(lab, path.join(PLAYBOOKS, 'site.yml'), [
        '--limit',
        'h1',
        '-e',
        `agyctl_systemd_dir=${units}`,
        '-e',
        'agyctl_check_timeout="1h 30min"',
      ]);
      expect(spaced.recap.get('h1'), spaced.out).toMatchObject({ failed: 1, changed: 0 });
      expect(spaced.out).toMatch(/agyctl_check_timeout is \\"1h 30min\\": it goes on the unit's command line/);
      expect(fs.readdirSync(units)).toEqual([]);
    },
    PLAY_TEST_MS,
  );

  it(
    "run as a non-root agyctl_user against a textfile directory laid out like Debian's, the role's defaults get agyctl_ samples scraped",
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const h = lab.host('h2');
      // Without the flag, Debian's package reads /var/lib/prometheus/node-exporter (compiled in;
      // /etc/default/prometheus-node-exporter leaves it): what the role reads from its --help when no flag is given.
      const help = await lab.run(lab.laptop, EXPORTER!, ['--help'], { timeoutMs: 30_000 });
      expect(`${String(help.stdout)}${String(help.stderr)}`).toMatch(
        /--collector\.textfile\.directory="\/var\/lib\/prometheus\/node-exporter"/,
      );
      // A box of its own outside the lab's private directory, so other users can reach it: node_exporter's
      // directory as the package leaves it (root:root 0755), a state directory and agyctl for the user nobody.
      const box = fs.mkdtempSync('/tmp/agyctl-debian-box-');
      try {
        fs.chmodSync(box, 0o755);
        const textfile = path.join(box, 'node-exporter');
        fs.mkdirSync(textfile, { mode: 0o755 });
        const bin = path.join(box, 'bin');
        fs.mkdirSync(bin, { mode: 0o755 });
        // A copy nobody can read: the checkout may sit in a 0700 directory (root's /root, a mktemp -d).
        const app = path.join(box, 'app');
        await copyApp(app);
        fs.writeFileSync(
          path.join(bin, 'agyctl'),
          `#!/bin/sh\nexec ${process.execPath} ${path.join(app, path.relative(ROOT, BIN))} "$@"\n`,
          { mode: 0o755 },
        );
        fs.writeFileSync(
          path.join(bin, 'agy_acp_server'),
          `#!/bin/sh\nexec ${process.execPath} ${path.join(app, path.relative(ROOT, SIM))} "$@"\n`,
          { mode: 0o755 },
        );
        // node_exporter as Debian runs it (user prometheus), reading the directory the role must leave alone;
        // started first, so the role sees a collector reading the directory it is told to write.
        exporter = await startNodeExporter(textfile, 'prometheus', PLAY_TEST_MS);
        // nobody's own directory (its passwd HOME, /nonexistent, does not exist): state and backups below it.
        const mine = path.join(box, 'nobody');
        fs.mkdirSync(mine, { mode: 0o700 });
        fs.chownSync(mine, NOBODY, NOGROUP);
        // The server finds its state from HOME, so the state dir has the server's shape below that directory.
        const state = path.join(mine, '.gemini', 'antigravity-acp');
        fs.mkdirSync(state, { recursive: true, mode: 0o700 });
        fs.chownSync(path.dirname(state), NOBODY, NOGROUP);
        fs.chownSync(state, NOBODY, NOGROUP);
        const backups = path.join(mine, 'backups');
        const units = path.join(box, 'systemd');
        fs.mkdirSync(units);
        const vars = [
          '--limit',
          'h2',
          '-e',
          'agyctl_user=nobody',
          '-e',
          `agyctl_state_dir=${state}`,
          '-e',
          `agyctl_backup_dir=${backups}`,
          '-e',
          `agyctl_bin=${bin}/agyctl`,
          '-e',
          `agyctl_textfile_dir=${textfile}`,
          '-e',
          `agyctl_systemd_dir=${units}`,
          '-e',
          'ansible_become_method=su',
          '-e',
          "ansible_become_flags='-s /bin/sh'",
          '-e',
          'agyctl_textfile_check=true',
        ];
        const r = await play(lab, path.join(PLAYBOOKS, 'site.yml'), vars);
        expect(r.code, r.out).toBe(0);
        // node_exporter's directory is as it was; agyctl's subdirectory and the file in it belong to nobody.
        const st = fs.statSync(textfile);
        expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([0, 0, 0o755]);
        const own = fs.statSync(path.join(textfile, 'agyctl'));
        expect([own.uid, own.mode & 0o7777]).toEqual([NOBODY, 0o755]);
        expect(fs.lstatSync(path.join(textfile, 'agyctl.prom')).isSymbolicLink()).toBe(true);
        const unit = fs.readFileSync(path.join(units, 'agyctl-check.service'), 'utf8');
        expect(unit).toMatch(/^User=nobody$/m);
        expect((await exposure(lab, path.join(units, 'agyctl-check.service'))).score).toBeLessThanOrEqual(2.0);
        expect((await exposure(lab, path.join(units, 'agyctl-backup.service'))).score).toBeLessThanOrEqual(2.0);

        // Signed in, then the check unit's command as systemd would run it: as nobody, with the unit's HOME.
        fs.writeFileSync(
          path.join(state, 'acp_token.json'),
          JSON.stringify({ access_token: 'a', refresh_token: 'r', expiry_date: Date.now() + 3_600_000 }),
          { mode: 0o600 },
        );
        fs.chownSync(path.join(state, 'acp_token.json'), NOBODY, NOGROUP);
        const argv = execStart(path.join(units, 'agyctl-check.service')).split(' ');
        const home = /^Environment=HOME=(.*)$/m.exec(unit)![1]!;
        const check = await lab.run(
          h.ns,
          'setpriv',
          [
            '--reuid=nobody',
            '--regid=nogroup',
            '--clear-groups',
            '--',
            'env',
            '-i',
            `HOME=${home}`,
            `PATH=${bin}:/usr/bin:/bin`,
            ...argv,
          ],
          { timeoutMs: 120_000, cwd: '/' },
        );
        expect(check.exitCode, `${String(check.stdout)}${String(check.stderr)}`).toBe(0);
        expect(fs.statSync(path.join(textfile, 'agyctl', 'agyctl.prom')).uid).toBe(NOBODY);

        const text = await (await fetch(`${exporter.base}/metrics`)).text();
        expect(series(text, 'node_textfile_scrape_error').get(''), text).toBe(0);
        expect(series(text, 'agyctl_check_ok').get('')).toBe(1);
        expect(series(text, 'agyctl_check_schedule_interval_seconds').get('')).toBe(300);
        expect(series(text, 'agyctl_backup_schedule_max_gap_seconds').get('')).toBe(3600);
        expect(series(text, 'agyctl_credentials_elsewhere').get('')).toBe(0);
      } finally {
        await exporter?.stop();
        exporter = undefined;
        fs.rmSync(box, { recursive: true, force: true });
      }
    },
    PLAY_TEST_MS,
  );
});
