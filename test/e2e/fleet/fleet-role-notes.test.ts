/**
 * What the role says when the host is not what it expects, run as root on
 * this machine with Debian's Ansible (local connection), one task file at a
 * time: a host without systemd-analyze is named as such (not as a schedule
 * systemd cannot read), and timers the role cannot enable because systemd
 * does not run the host (agyctl_systemd=auto) are reported inactive. The
 * latter runs in a mount namespace where /run/systemd is an empty tmpfs,
 * so it is the same on a machine systemd runs.
 *
 * @module-tag root
 * @module-tag ansible
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerDir } from '../../helpers/ansible-play.js';
import { which } from '../../helpers/ns-lab.js';
import { requireRoot } from '../../helpers/os-user.js';

const TEST_MS = 180_000;
let dir: string;
let controller: string;

beforeAll(() => {
  requireRoot('the role note tests');
  for (const tool of ['ansible-playbook', 'unshare'])
    if (!which(tool)) throw new Error(`${tool} is not installed; .ci/run installs it (ansible-core, util-linux)`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-role-notes-'));
  controller = controllerDir(path.join(dir, 'controller'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** One of the role's task files, alone on localhost, with `vars`; `environment` for its tasks; `wrap` runs it. */
async function taskFile(
  file: string,
  vars: Record<string, unknown>,
  options: { environment?: Record<string, string>; wrap?: string[] } = {},
): Promise<{ code: number; out: string }> {
  const play = [
    {
      hosts: 'localhost',
      gather_facts: false,
      ...(options.environment ? { environment: options.environment } : {}),
      tasks: [
        {
          name: `The role's ${file}`,
          'ansible.builtin.include_role': { name: 'agyctl.fleet.agyctl', tasks_from: file },
          vars,
        },
      ],
    },
  ];
  const playbook = path.join(controller, `${file}-play.yml`);
  fs.writeFileSync(playbook, JSON.stringify(play));
  const argv = ['ansible-playbook', '-c', 'local', '-i', 'localhost,', playbook];
  const [cmd, ...args] = [...(options.wrap ?? []), ...argv];
  const r = await execa(cmd!, args, {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: controller,
      LANG: 'C.UTF-8',
      ANSIBLE_COLLECTIONS_PATH: path.join(controller, 'collections'),
      ANSIBLE_LOCAL_TEMP: path.join(controller, 'tmp'),
      ANSIBLE_NOCOLOR: '1',
      ANSIBLE_RETRY_FILES_ENABLED: '0',
      ANSIBLE_PYTHON_INTERPRETER: '/usr/bin/python3',
    },
    extendEnv: false,
    reject: false,
    timeout: 150_000,
  });
  return { code: r.exitCode ?? -1, out: `${r.stdout}\n${r.stderr}` };
}

describe('the role names what the host lacks', () => {
  it(
    'a host without systemd-analyze fails naming it, not the schedule it could not check',
    async () => {
      const empty = path.join(dir, 'empty-path');
      fs.mkdirSync(empty, { recursive: true });
      const r = await taskFile('validate.yml', {}, { environment: { PATH: empty } });
      expect(r.code, r.out).not.toBe(0);
      expect(r.out).toMatch(/systemd-analyze is not installed on this host/);
      expect(r.out).toMatch(/apt-get install systemd/);
      expect(r.out).not.toMatch(/which systemd cannot read/);
    },
    TEST_MS,
  );

  it(
    'timers left inactive because systemd does not run the host (agyctl_systemd=auto) are reported as such',
    async () => {
      const units = path.join(dir, 'units');
      fs.mkdirSync(units, { recursive: true });
      const home = path.join(dir, 'home');
      const vars = {
        agyctl_systemd: 'auto',
        agyctl_systemd_dir: units,
        agyctl_become: false,
        agyctl_run_user: 'root',
        agyctl_run_home: home,
        agyctl_run_state_dir: path.join(home, '.gemini', 'antigravity-acp'),
        agyctl_run_backup_dir: path.join(home, 'backups'),
        agyctl_run_metrics_dir: path.join(dir, 'textfile', 'agyctl'),
        agyctl_run_backup_metrics: true,
        agyctl_bin: '/usr/bin/agyctl',
      };
      // /run/systemd hidden under an empty tmpfs in a mount namespace of its own, where systemd runs this machine.
      const wrap = fs.existsSync('/run/systemd')
        ? [
            'unshare',
            '--mount',
            '--propagation',
            'private',
            'sh',
            '-c',
            'mount -t tmpfs none /run/systemd && exec "$@"',
            'sh',
          ]
        : [];
      const r = await taskFile('systemd.yml', vars, { wrap });
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(
        /agyctl's timers are INACTIVE on this host: systemd does not run it \(no \/run\/systemd\/system; agyctl_systemd is auto\)/,
      );
      expect(r.out).toContain('systemctl enable --now agyctl-check.timer agyctl-backup.timer');
      expect(fs.readdirSync(units).sort()).toEqual([
        'agyctl-backup.service',
        'agyctl-backup.timer',
        'agyctl-check.service',
        'agyctl-check.timer',
      ]);
    },
    TEST_MS,
  );
});
