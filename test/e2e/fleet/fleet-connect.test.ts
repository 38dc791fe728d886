/**
 * `agyctl connect` for several hosts against the fleet lab: the laptop
 * namespace runs connect with the browser shim (test/helpers/browser-shim.mjs
 * through BROWSER), three host namespaces run sshd, and `agyctl` on their
 * PATH logs in with the simulator as the server. Covers the first login of
 * every host, the skip of healthy hosts on a rerun, a host whose sshd is
 * down (reported, the others done), --inventory through ansible-inventory
 * with --limit, and Ctrl-C (every host's master and remote login cleaned up).
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, makeSandbox, parseEvents, ROOT, type Sandbox } from '../../helpers/cli.js';
import { type FleetLab, requireFleetLab, useFleetLab } from '../../helpers/fleet-lab.js';
import { EventStream } from '../../helpers/ndjson.js';
import { LAB_POLL_MS } from '../../helpers/ns-lab.js';
import { until } from '../../helpers/until.js';

const NODE = process.execPath;
const SHIM = path.join(ROOT, 'test', 'helpers', 'browser-shim.mjs');
const RUN_MS = 150_000;

const fx = useFleetLab({ hosts: 3 });

interface Laptop {
  sandbox: Sandbox;
  shimLog: string;
}

function laptop(lab: FleetLab): Laptop {
  const sandbox = makeSandbox();
  const shimLog = path.join(sandbox.root, 'browser.log');
  const browser = path.join(sandbox.root, 'browser');
  fs.writeFileSync(browser, `#!/bin/sh\nexec ${NODE} ${SHIM} "$@"\n`, { mode: 0o755 });
  sandbox.env = { ...sandbox.env, PATH: `${lab.sshBin}:${process.env.PATH}`, BROWSER: browser, SHIM_LOG: shimLog };
  delete sandbox.env.AGYCTL_SERVER;
  return { sandbox, shimLog };
}

function connect(lab: FleetLab, l: Laptop, args: string[], stdin: 'pipe' | 'ignore' = 'ignore') {
  return fx.track(
    lab.run(lab.laptop, NODE, [BIN, 'connect', '--timeout', '30s', ...args], {
      env: l.sandbox.env,
      timeoutMs: RUN_MS,
      cwd: l.sandbox.root,
      stdin,
    }),
  );
}

const token = (lab: FleetLab, name: string): string => path.join(lab.host(name).stateDir, 'acp_token.json');

function hostResults(stdout: string): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const ev of parseEvents(stdout)) if (ev.event === 'host-result') out[String(ev.host)] = ev;
  return out;
}

/** No ssh master, remote login or check left: the laptop namespace is empty, each host runs only its sshd. */
async function expectNothingLeft(lab: FleetLab, l: Laptop): Promise<void> {
  await until(
    'no process left in the laptop namespace',
    15_000,
    async () => (await lab.pids(lab.laptop)).length === 0,
    LAB_POLL_MS,
  );
  for (const h of lab.hosts) {
    const sshd = h.sshdPid();
    await until(
      `no process but sshd left on ${h.name}`,
      15_000,
      async () => (await lab.pids(h.ns)).every((pid) => pid === sshd),
      LAB_POLL_MS,
    );
  }
  expect(fs.readdirSync(l.sandbox.root).filter((n) => n.startsWith('agyctl-connect-'))).toEqual([]);
}

describe('agyctl connect for a fleet', () => {
  it(
    'logs three hosts in, one browser tab each, with one event per host and a summary',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const l = laptop(lab);
      const r = await connect(lab, l, ['h1', 'h2', 'h3', '--json']);
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const results = hostResults(String(r.stdout));
      for (const name of ['h1', 'h2', 'h3']) {
        expect(results[name], String(r.stdout)).toMatchObject({
          result: 'logged-in',
          exit: 0,
          checkStatus: 'not-authenticated',
          error: null,
        });
        expect(fs.statSync(token(lab, name)).mode & 0o777).toBe(0o600);
      }
      const events = parseEvents(String(r.stdout));
      // The one-host flow's events carry their host.
      expect(events.filter((e) => e.event === 'verified').map((e) => e.host)).toEqual(['h1', 'h2', 'h3']);
      expect(events.filter((e) => e.event === 'url').every((e) => typeof e.host === 'string')).toBe(true);
      const summary = events.at(-1)!;
      expect(summary).toMatchObject({
        event: 'fleet-summary',
        ok: true,
        exit: 0,
        counts: { 'logged-in': 3, healthy: 0, failed: 0 },
      });
      const opened = fs
        .readFileSync(l.shimLog, 'utf8')
        .split('\n')
        .filter((x) => x.includes('"opened"'));
      expect(opened).toHaveLength(3);
      await expectNothingLeft(lab, l);
    },
    RUN_MS,
  );

  it(
    'skips hosts that are already healthy on a rerun, logs in the one that is not, and prints the table',
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const l = laptop(lab);
      fs.rmSync(token(lab, 'h2'));
      const r = await connect(lab, l, ['h1', 'h2', 'h3']);
      const stdout = String(r.stdout);
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(stdout).toMatch(/^HOST +RESULT +TIME +EXIT$/m);
      expect(stdout).toMatch(/^h1 +healthy +\S+ +0$/m);
      expect(stdout).toMatch(/^h2 +logged-in +\S+ +0$/m);
      expect(stdout).toMatch(/^h3 +healthy +\S+ +0$/m);
      expect(String(r.stderr)).toMatch(/h1: already healthy .*skipped/);
      expect(
        fs
          .readFileSync(l.shimLog, 'utf8')
          .split('\n')
          .filter((x) => x.includes('"opened"')),
      ).toHaveLength(1);
      expect(fs.existsSync(token(lab, 'h2'))).toBe(true);
      await expectNothingLeft(lab, l);
    },
    RUN_MS,
  );

  it(
    "survives a host whose sshd is down: reported with ssh's message and exit 4, the others logged in",
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const l = laptop(lab);
      fs.rmSync(token(lab, 'h1'));
      fs.rmSync(token(lab, 'h3'));
      const inventory = path.join(l.sandbox.root, 'hosts.ini');
      fs.writeFileSync(inventory, '[boxes]\nh1\nh2\nh3\n');
      await lab.host('h2').stopSshd();
      try {
        const r = await connect(lab, l, ['--inventory', inventory, '--json']);
        expect(r.exitCode, String(r.stderr)).toBe(4);
        const results = hostResults(String(r.stdout));
        expect(results.h1).toMatchObject({ result: 'logged-in', exit: 0 });
        expect(results.h2).toMatchObject({
          result: 'failed',
          exit: 4,
          error: { code: 'ssh-failed', message: expect.stringMatching(/Connection refused/) },
        });
        expect(results.h3).toMatchObject({ result: 'logged-in', exit: 0 });
        expect(parseEvents(String(r.stdout)).at(-1)).toMatchObject({
          event: 'fleet-summary',
          ok: false,
          exit: 4,
          counts: { 'logged-in': 2, failed: 1 },
        });
        expect(fs.existsSync(token(lab, 'h1'))).toBe(true);
        expect(fs.existsSync(token(lab, 'h3'))).toBe(true);
      } finally {
        await lab.host('h2').startSshd();
      }
      await expectNothingLeft(lab, l);
    },
    RUN_MS,
  );

  it(
    "--inventory with --limit uses Ansible's patterns; all selected hosts healthy means exit 0 and no login",
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const l = laptop(lab);
      const inventory = path.join(l.sandbox.root, 'hosts.ini');
      fs.writeFileSync(inventory, '[web]\nh1\nh2\n[db]\nh3\n');
      const r = await connect(lab, l, ['--inventory', inventory, '--limit', 'web:db:!h2', '--json']);
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const results = hostResults(String(r.stdout));
      expect(Object.keys(results).sort()).toEqual(['h1', 'h3']);
      expect(results.h1).toMatchObject({ result: 'healthy' });
      expect(results.h3).toMatchObject({ result: 'healthy' });
      expect(fs.existsSync(l.shimLog)).toBe(false);
      await expectNothingLeft(lab, l);
    },
    RUN_MS,
  );

  it(
    "Ctrl-C during the first host's login cancels it, runs no other host, and leaves nothing behind (exit 130)",
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const l = laptop(lab);
      for (const h of lab.hosts) fs.rmSync(token(lab, h.name), { force: true });
      const child = connect(lab, l, ['h1', 'h2', 'h3', '--json', '--no-open'], 'pipe');
      const events = new EventStream(child.stdout!);
      await events.waitFor('forward-added', 60_000);
      child.kill('SIGINT');
      const r = await child;
      expect(r.exitCode, String(r.stderr)).toBe(130);
      const results = hostResults(String(r.stdout));
      expect(results.h1).toMatchObject({ result: 'interrupted', exit: 130 });
      expect(results.h2).toBeUndefined();
      const summary = parseEvents(String(r.stdout)).at(-1)!;
      expect(summary).toMatchObject({ event: 'fleet-summary', exit: 130, counts: { interrupted: 1, 'not-run': 2 } });
      for (const h of lab.hosts) expect(fs.existsSync(token(lab, h.name))).toBe(false);
      await expectNothingLeft(lab, l);
    },
    RUN_MS,
  );

  it(
    "Ctrl-C during the first host's check stops the remote check and its server there (exit 130)",
    async (ctx) => {
      const lab = requireFleetLab(fx.result(), ctx);
      const l = laptop(lab);
      const h1 = lab.host('h1');
      // A server that takes 30 s to start keeps the remote `check --live` busy.
      const child = connect(
        lab,
        l,
        ['h1', 'h2', '--json', '--remote-agyctl', 'env AGY_SIM_STARTUP_MS=30000 agyctl'],
        'pipe',
      );
      const sshd = h1.sshdPid();
      // sshd's session process, the remote agyctl and its server: the check is running.
      await until(
        'the remote check to start its server on h1',
        30_000,
        async () => (await lab.pids(h1.ns)).filter((pid) => pid !== sshd).length >= 3,
        LAB_POLL_MS,
      );
      const startedAt = Date.now();
      child.kill('SIGINT');
      const r = await child;
      expect(r.exitCode, String(r.stderr)).toBe(130);
      expect(Date.now() - startedAt).toBeLessThan(20_000);
      expect(hostResults(String(r.stdout)).h1).toMatchObject({ result: 'interrupted', exit: 130 });
      expect(parseEvents(String(r.stdout)).at(-1)).toMatchObject({
        event: 'fleet-summary',
        exit: 130,
        counts: { interrupted: 1, 'not-run': 1 },
      });
      await expectNothingLeft(lab, l);
    },
    RUN_MS,
  );
});
