/**
 * The two sides of an `agyctl connect` e2e test in the SSH lab (netns.ts):
 * a remote sandbox whose agyctl runs the simulator, a laptop sandbox whose
 * BROWSER is a shim (browser-shim.mjs, or chromium-shim.mjs for the real
 * browser), connect started in the laptop namespace, and the check that
 * nothing is left on either side afterwards.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ResultPromise } from 'execa';
import { expect } from 'vitest';
import { BIN, makeSandbox, processesOf, ROOT, type Sandbox, SIM } from './cli.js';
import { EventStream } from './ndjson.js';
import { type LabFixture, labSettled, type SshLab } from './netns.js';

export const NODE = process.execPath;
export const BROWSER_SHIM = path.join(ROOT, 'test', 'helpers', 'browser-shim.mjs');
export const CHROMIUM_SHIM = path.join(ROOT, 'test', 'helpers', 'chromium-shim.mjs');
export const RUN_MS = 45_000;

export interface Sides {
  laptop: Sandbox;
  remote: Sandbox;
  shimLog: string;
}

export function sides(lab: SshLab, shim = BROWSER_SHIM): Sides {
  const remote = makeSandbox();
  const laptop = makeSandbox();
  const shimLog = path.join(laptop.root, 'browser.log');
  const browser = path.join(laptop.root, 'browser');
  fs.writeFileSync(browser, `#!/bin/sh\nexec ${NODE} ${shim} "$@"\n`, { mode: 0o755 });
  laptop.env = { ...laptop.env, PATH: `${lab.sshBareBin}:${process.env.PATH}`, BROWSER: browser, SHIM_LOG: shimLog };
  return { laptop, remote, shimLog };
}

export const sq = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

/** The remote agyctl: the built binary with the simulator and the remote sandbox's HOME (quoted values exercise connect's quoting). */
export function remoteAgyctl(remote: Sandbox, extra: Record<string, string> = {}): string {
  const vars = { HOME: remote.home, TMPDIR: remote.root, NO_COLOR: '1', AGYCTL_SERVER: `${NODE} ${SIM}`, ...extra };
  return `env ${Object.entries(vars)
    .map(([k, v]) => `${k}=${sq(v)}`)
    .join(' ')} ${NODE} ${BIN}`;
}

export function startConnect(
  fx: LabFixture,
  lab: SshLab,
  s: Sides,
  args: string[],
  { detached = false }: { detached?: boolean } = {},
): { child: ResultPromise; events: EventStream } {
  const child = lab.run(lab.laptop, NODE, [BIN, ...args], {
    env: s.laptop.env,
    stdin: 'pipe',
    timeoutMs: RUN_MS,
    cwd: s.laptop.root,
    detached,
  });
  fx.track(child);
  return { child, events: new EventStream(child.stdout!) };
}

export function shimEntries(s: Sides): Array<Record<string, unknown>> {
  if (!fs.existsSync(s.shimLog)) return [];
  return fs
    .readFileSync(s.shimLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** No forward or relay, no master, no leftover process on either side; only the lab's sshd remains in "remote". */
export async function expectNothingLeft(lab: SshLab, s: Sides, port?: number): Promise<void> {
  await labSettled(lab, 10_000);
  expect(processesOf(s.remote)).toEqual([]);
  expect(processesOf(s.laptop)).toEqual([]);
  if (port !== undefined) expect(await lab.listening(lab.laptop, port)).toBe(false);
  expect(fs.readdirSync(s.laptop.root).filter((n) => n.startsWith('agyctl-connect-'))).toEqual([]);
}

export function tokenMode(remote: Sandbox): string {
  return (fs.statSync(path.join(remote.stateDir, 'acp_token.json')).mode & 0o777).toString(8);
}
