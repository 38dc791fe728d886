/**
 * Debian's Prometheus daemons (prometheus-node-exporter, prometheus) on a
 * free loopback port for a test: started with a bound lifetime, ready when
 * they say they listen, retried when another process took the port between
 * our probe and their bind. The caller kills them (SIGKILL, then awaits).
 */
import fs from 'node:fs';
import net from 'node:net';
import { execa, type ResultPromise } from 'execa';

export interface Daemon {
  child: ResultPromise;
  port: number;
  /** http://127.0.0.1:<port> */
  base: string;
  log(): string;
  stop(): Promise<void>;
}

export const NODE_EXPORTER = ['/usr/bin/prometheus-node-exporter', '/usr/sbin/prometheus-node-exporter'].find((p) =>
  fs.existsSync(p),
);
export const PROMETHEUS = ['/usr/bin/prometheus'].find((p) => fs.existsSync(p));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Start `bin` with `args(port)`; ready when its log matches `ready`. Lives at most `lifetimeMs`. */
export async function startDaemon(
  bin: string,
  args: (port: number) => string[],
  ready: RegExp,
  lifetimeMs = 120_000,
): Promise<Daemon> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const port = await freePort();
    let log = '';
    const child = execa(bin, args(port), { reject: false, stdin: 'ignore', buffer: false, timeout: lifetimeMs });
    child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    const up = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 20_000);
      const poll = setInterval(() => {
        if (ready.test(log)) {
          clearInterval(poll);
          clearTimeout(timer);
          resolve(true);
        }
      }, 50);
      void child.then(() => {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(false);
      });
    });
    const stop = async (): Promise<void> => {
      child.kill('SIGKILL');
      await child;
    };
    if (up) return { child, port, base: `http://127.0.0.1:${port}`, log: () => log, stop };
    await stop();
    if (!/address already in use/.test(log)) throw new Error(`${bin} did not start: ${log}`);
  }
  throw new Error(`${bin} found no free port in 5 attempts`);
}

/** node_exporter with only the textfile collector, reading `dir`; as `user` (through setpriv) when given. */
export function startNodeExporter(dir: string, user?: string, lifetimeMs?: number): Promise<Daemon> {
  if (!NODE_EXPORTER)
    throw new Error(
      'prometheus-node-exporter is not installed; .ci/run installs it: apt-get install prometheus-node-exporter',
    );
  const asUser = user ? [`--reuid=${user}`, `--regid=${user}`, '--init-groups', '--', NODE_EXPORTER] : [];
  return startDaemon(
    user ? 'setpriv' : NODE_EXPORTER,
    (port) => [
      ...asUser,
      '--web.listen-address',
      `127.0.0.1:${port}`,
      '--collector.disable-defaults',
      '--collector.textfile',
      `--collector.textfile.directory=${dir}`,
    ],
    /Listening on|msg="Listening/,
    lifetimeMs,
  );
}

/** `name{labels} value` lines of one metric in an exposition, as label-string -> value. */
export function series(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === name) found.set(m[2] ?? '', Number(m[3]));
  }
  return found;
}
