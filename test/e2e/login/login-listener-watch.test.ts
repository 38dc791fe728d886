/**
 * How fast `login` notices that the server's loopback listener vanished
 * (AGY_SIM_DROP_LISTENER_MS), measured against the simulator in process:
 * from the moment the port refuses connections to the moment run() returns.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { makeSandbox, type Sandbox } from '../../helpers/cli.js';
import { runInProcess } from '../../helpers/in-process.js';

let sandbox: Sandbox | undefined;

/** A bare connect-and-close, as agyctl probes (the listener tolerates it). */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

describe('listener watch', () => {
  it('reports a vanished listener within 2 s of its closing: one probe period plus the grace for a just-finished callback', async () => {
    sandbox = makeSandbox({ AGY_SIM_DROP_LISTENER_MS: '1500' });
    let port: number | undefined;
    let buffered = '';
    let done = false;
    const login = runInProcess(['login', '--json', '--timeout', '60s'], {
      env: sandbox.env,
      cwd: sandbox.root,
      onStdout: (chunk) => {
        buffered += chunk;
        const url = buffered.split('\n').find((l) => l.includes('"event":"url"'));
        if (url && port === undefined) port = (JSON.parse(url) as { port: number }).port;
      },
    }).finally(() => (done = true));
    // Watch the port ourselves: the moment it refuses is when the listener vanished.
    let closedAt: number | undefined;
    while (!done && closedAt === undefined) {
      if (port !== undefined && (await refuses(port))) closedAt = Date.now();
      else await new Promise((r) => setTimeout(r, 20));
    }
    const result = await login;
    const endedAt = Date.now();
    expect(result.exit, result.stderr).toBe(4);
    expect(result.stdout).toContain('"code":"listener-gone"');
    expect(closedAt, 'the listener closed while login waited').toBeDefined();
    const noticedAfter = endedAt - closedAt!;
    // Nominal: the grace (0.9 s) plus up to one probe period (0.7 s); measured 1.55 s on an idle
    // box. The grace must be there (a callback that just finished closes the listener too); the
    // 2 s promise gets 1.2 s of slack for a loaded machine (a 4 s probe period fails this).
    expect(noticedAfter).toBeGreaterThanOrEqual(450);
    expect(noticedAfter).toBeLessThan(2000 + 1200);
  });
});
