/**
 * Start test/fixtures/wal-writer.mjs: a process holding a WAL database open
 * without checkpointing and committing on an interval, like a live server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './cli.js';

export const WAL_WRITER = path.join(ROOT, 'test', 'fixtures', 'wal-writer.mjs');

export interface Writer {
  child: ChildProcess;
  pid: number;
  /** Rows committed before "ready". */
  initialRows: number;
  /** Stop (SIGTERM) and wait for exit; the WAL stays un-checkpointed. Returns the total rows committed. */
  stop(): Promise<number>;
}

export async function startWriter(db: string, args: string[] = [], timeoutMs = 30_000): Promise<Writer> {
  const child = spawn(process.execPath, [WAL_WRITER, db, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const initialRows = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wal-writer not ready after ${timeoutMs} ms: ${err}`)), timeoutMs);
    const check = (): void => {
      const m = /^ready (\d+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`wal-writer exited ${code}: ${err}`));
    });
  });
  return {
    child,
    pid: child.pid!,
    initialRows,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      const m = /^stopped (\d+)/m.exec(out);
      return m ? Number(m[1]) : -1;
    },
  };
}
