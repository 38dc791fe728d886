/**
 * The role's node_exporter discovery and metrics directory against a local
 * user who plays node_exporter. As the review did it: a created user runs a
 * fake `node_exporter` of their own (a compiled program that, run with
 * --help, leaves a proof file only root can write), one with a
 * --collector.textfile.directory in their home where a link waits for
 * root's chown. The module (agyctl_textfile_info) and the role's metrics.yml
 * run as root on this machine with Debian's Ansible (local connection).
 * Missing tools are a failure, not a skip: .ci/run installs them.
 *
 * @module-tag root
 * @module-tag ansible
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controllerDir } from '../../helpers/ansible-play.js';
import { type Daemon, NODE_EXPORTER, startDaemon, startNodeExporter } from '../../helpers/loopback-daemon.js';
import { which } from '../../helpers/ns-lab.js';
import { createUser, type OsUser, requireRoot } from '../../helpers/os-user.js';

const TEST_MS = 180_000;
const FAKE_C = `
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0) {
      FILE *f = fopen(PROOF, "w");
      if (f) { fprintf(f, "uid %d\\n", (int)getuid()); fclose(f); }
      return 0;
    }
  for (;;) pause();
}
`;

let box: string;
let home: string;
let user: OsUser;
let controller: string;
/** Where the fake writes when someone runs it with --help: root's directory, so only root can. */
let proof: string;
const started: ChildProcess[] = [];
const exporters: Daemon[] = [];

beforeAll(async () => {
  requireRoot('the textfile trust tests');
  for (const tool of ['ansible', 'ansible-playbook', 'gcc'])
    if (!which(tool)) throw new Error(`${tool} is not installed; .ci/run installs it (ansible-core, g++)`);
  box = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-textfile-trust-'));
  fs.chmodSync(box, 0o755);
  home = path.join(box, 'home');
  user = createUser(home);
  fs.mkdirSync(path.join(home, 'bin'), { recursive: true });
  proof = path.join(box, 'proof');
  const source = path.join(box, 'fake.c');
  fs.writeFileSync(source, FAKE_C);
  const fake = path.join(home, 'bin', 'node_exporter');
  await execa('gcc', ['-O0', `-DPROOF="${proof}"`, '-o', fake, source], { timeout: 120_000 });
  for (const p of [home, path.join(home, 'bin'), fake]) fs.chownSync(p, user.uid, user.gid);
  controller = controllerDir(path.join(box, 'controller'));
}, TEST_MS);

afterEach(async () => {
  for (const c of started.splice(0)) c.kill('SIGKILL');
  for (const e of exporters.splice(0)) await e.stop();
});

afterAll(() => {
  user?.remove();
  if (box) fs.rmSync(box, { recursive: true, force: true });
});

/** The user's fake node_exporter, run as the user (or as root from the user's directory), with `args`. */
function startFake(args: string[], asRoot = false): number {
  const child = spawn(path.join(home, 'bin', 'node_exporter'), args, {
    stdio: 'ignore',
    ...(asRoot ? {} : { uid: user.uid, gid: user.gid }),
  });
  started.push(child);
  if (!child.pid) throw new Error('the fake node_exporter did not start');
  return child.pid;
}

const ansibleEnv = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: controller,
  LANG: 'C.UTF-8',
  ANSIBLE_COLLECTIONS_PATH: path.join(controller, 'collections'),
  ANSIBLE_LOCAL_TEMP: path.join(controller, 'tmp'),
  ANSIBLE_NOCOLOR: '1',
  ANSIBLE_RETRY_FILES_ENABLED: '0',
  ANSIBLE_DEPRECATION_WARNINGS: '0',
  ANSIBLE_PYTHON_INTERPRETER: '/usr/bin/python3',
});

interface ModuleResult {
  /** Only when the module failed (the ad-hoc output prints no `failed`). */
  msg?: string;
  directories: string[];
  readers: Array<{ source: string; directory: string }>;
  ignored: Array<{ source: string; binary: string; reason: string }>;
  summary: string;
}

/** agyctl_textfile_info run by root on this machine, through Ansible's local connection. */
async function textfileInfo(args = ''): Promise<ModuleResult> {
  const r = await execa(
    'ansible',
    ['localhost', '-c', 'local', '-i', 'localhost,', '-m', 'agyctl.fleet.agyctl_textfile_info', '-a', args],
    {
      env: ansibleEnv(),
      extendEnv: false,
      reject: false,
      timeout: 120_000,
    },
  );
  // `localhost | SUCCESS => {…}` (or `FAILED! =>`): the module's result as JSON.
  const at = r.stdout.indexOf('=> {');
  if (at < 0) throw new Error(`ansible gave no module result: ${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.slice(at + 3)) as ModuleResult;
}

/** The role's metrics.yml alone, as root on this machine, with `vars`. */
async function metricsPlay(vars: Record<string, unknown>): Promise<{ code: number; out: string }> {
  const play = [
    {
      hosts: 'localhost',
      gather_facts: false,
      tasks: [
        {
          name: 'The metrics tasks of the role',
          'ansible.builtin.include_role': { name: 'agyctl.fleet.agyctl', tasks_from: 'metrics.yml' },
          vars: {
            agyctl_become: false,
            agyctl_run_user: user.name,
            agyctl_run_backup_metrics: false,
            agyctl_backup_timer: false,
            agyctl_check_interval_s: 300,
            agyctl_backup_max_gap_s: 0,
            ...vars,
          },
        },
      ],
    },
  ];
  const file = path.join(controller, 'metrics-play.yml');
  fs.writeFileSync(file, JSON.stringify(play));
  const r = await execa('ansible-playbook', ['-c', 'local', '-i', 'localhost,', file], {
    env: ansibleEnv(),
    extendEnv: false,
    reject: false,
    timeout: 150_000,
  });
  return { code: r.exitCode ?? -1, out: `${r.stdout}\n${r.stderr}` };
}

/** A root-only directory and a link to it planted where the role would make agyctl's metrics directory. */
function plantLink(textfile: string): string {
  const secret = path.join(box, `root-only-${path.basename(textfile)}`);
  fs.mkdirSync(secret, { mode: 0o700 });
  fs.mkdirSync(textfile, { recursive: true });
  fs.symlinkSync(secret, path.join(textfile, 'agyctl'));
  return secret;
}

describe("agyctl_textfile_info never believes a user's node_exporter", () => {
  it(
    'runs nothing it found, and ignores fakes run by the user or run by root from a directory the user owns',
    async () => {
      const byUser = startFake([]);
      const withDir = startFake([`--collector.textfile.directory=${home}/x`]);
      const fromUserDir = startFake(['--web.listen-address=127.0.0.1:0'], true);
      const r = await textfileInfo();
      expect(
        fs.existsSync(proof),
        `root ran the fake: ${fs.existsSync(proof) ? fs.readFileSync(proof, 'utf8') : ''}`,
      ).toBe(false);
      expect(r.directories.filter((d) => d.startsWith(home))).toEqual([]);
      const readers = r.readers.map((x) => x.source);
      for (const pid of [byUser, withDir, fromUserDir]) expect(readers).not.toContain(`process ${pid}`);
      const ignored = new Map(r.ignored.map((x) => [x.source, x.reason]));
      expect(ignored.get(`process ${byUser}`)).toMatch(new RegExp(`run by uid ${user.uid}`));
      expect(ignored.get(`process ${withDir}`)).toMatch(new RegExp(`run by uid ${user.uid}`));
      expect(ignored.get(`process ${fromUserDir}`)).toMatch(new RegExp(`owned by uid ${user.uid}, not root`));
      expect(r.summary).toContain(`process ${withDir} ignored`);
    },
    TEST_MS,
  );

  it(
    "believes Debian's node_exporter run by its service user, learns its packaged default without running it, and refuses to pick between two",
    async () => {
      const chosen = path.join(box, 'chosen');
      exporters.push(await startNodeExporter(chosen, 'prometheus', TEST_MS));
      // Debian's binary without the flag reads its packaged default; learnt without running it.
      exporters.push(
        await startDaemon(
          'setpriv',
          (port) => [
            '--reuid=prometheus',
            '--regid=prometheus',
            '--init-groups',
            '--',
            NODE_EXPORTER!,
            '--web.listen-address',
            `127.0.0.1:${port}`,
            '--collector.disable-defaults',
            '--collector.textfile',
          ],
          /Listening on|msg="Listening/,
          TEST_MS,
        ),
      );
      const told = await textfileInfo(`path=${chosen}`);
      expect(told.msg).toBeUndefined();
      expect(told.directories).toContain(chosen);
      const dirOf = (d: Daemon): string | undefined =>
        told.readers.find((x) => x.source === `process ${d.child.pid}`)?.directory;
      expect(dirOf(exporters[0]!), told.summary).toBe(chosen);
      expect(dirOf(exporters[1]!), told.summary).toBe('/var/lib/prometheus/node-exporter');
      const untold = await textfileInfo();
      expect(untold.msg).toMatch(/more than one textfile directory/);
      expect(untold.msg).toMatch(/agyctl_textfile_dir/);
    },
    TEST_MS,
  );
});

describe('metrics.yml never manages, as root, a path the user controls', () => {
  it(
    "refuses a textfile directory in the user's home, and a link where agyctl's directory goes; root's directory stays root's",
    async () => {
      const mine = path.join(home, 'x');
      const secret = plantLink(mine);
      fs.chownSync(mine, user.uid, user.gid);
      fs.lchownSync(path.join(mine, 'agyctl'), user.uid, user.gid);
      const told = await metricsPlay({ agyctl_textfile_dir: mine, agyctl_textfile_check: false });
      expect(told.code, told.out).not.toBe(0);
      expect(told.out).toMatch(new RegExp(`owned by uid ${user.uid}, not root`));
      expect(told.out).toMatch(/agyctl_textfile_dir/);

      // The same link in a directory root owns.
      const rootsOwn = path.join(box, 'textfile');
      const secret2 = plantLink(rootsOwn);
      const linked = await metricsPlay({ agyctl_textfile_dir: rootsOwn, agyctl_textfile_check: false });
      expect(linked.code, linked.out).not.toBe(0);
      expect(linked.out).toContain(`${rootsOwn}/agyctl is a link`);

      // Found through a fake node_exporter of the user's, with the check on.
      startFake([`--collector.textfile.directory=${mine}`]);
      const found = await metricsPlay({ agyctl_textfile_dir: '', agyctl_textfile_check: true });
      expect(found.out).not.toMatch(new RegExp(`reads ${mine}\\b`));

      for (const dir of [secret, secret2]) {
        const st = fs.statSync(dir);
        expect(st.uid, dir).toBe(0);
        expect(st.mode & 0o777, dir).toBe(0o700);
        expect(fs.readdirSync(dir), dir).toEqual([]);
      }
      expect(fs.readdirSync(rootsOwn).sort()).toEqual(['agyctl']);
    },
    TEST_MS,
  );
});
