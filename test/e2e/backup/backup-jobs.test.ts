/**
 * `backup --jobs N` (sessions snapshotted in parallel worker threads) and
 * `backup --prometheus FILE` on the built binary.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox } from '../../helpers/cli.js';
import { parseExposition } from '../../helpers/exposition.js';
import { startWriter, type Writer } from '../../helpers/wal-writer.js';

let sandbox: Sandbox | undefined;
const writers: Writer[] = [];
afterEach(async () => {
  for (const w of writers.splice(0)) await w.stop();
  sandbox = undefined;
});

const conv = (sb: Sandbox, file = ''): string => path.join(sb.stateDir, 'conversations', file);
const ids = Array.from({ length: 6 }, (_, i) => `${String(i + 1).repeat(8)}-1111-4111-8111-111111111111`);

async function writer(sb: Sandbox, id: string, args: string[]): Promise<Writer> {
  fs.mkdirSync(conv(sb), { recursive: true });
  fs.writeFileSync(conv(sb, `${id}.meta`), JSON.stringify({ cwd: `/w/${id.slice(0, 2)}` }));
  const w = await startWriter(conv(sb, `${id}.db`), ['--interval-ms', '60000', ...args]);
  writers.push(w);
  return w;
}

const metric = (file: string, name: string): number | undefined =>
  parseExposition(fs.readFileSync(file, 'utf8')).get(name)?.samples[0]?.value;

describe('backup --jobs', () => {
  it('snapshots sessions in parallel; the manifest keeps the discovery order and verify passes', async () => {
    sandbox = makeSandbox();
    for (const [i, id] of ids.entries()) await writer(sandbox, id, ['--initial-rows', String(3 + i * 7)]);
    const listed = (parseJson((await agyctl(['sessions', '--json'], sandbox)).stdout) as any).sessions.map(
      (s: any) => s.id,
    );
    const r = await agyctl(['backup', '--to', path.join(sandbox.root, 'bk'), '--jobs', '3', '--json'], sandbox);
    expect(r.exitCode).toBe(0);
    const doc = parseJson(r.stdout) as any;
    expect(doc.sessions.map((s: any) => s.id)).toEqual(listed);
    expect(Object.fromEntries(doc.sessions.map((s: any) => [s.id, s.rows.steps]))).toEqual(
      Object.fromEntries(ids.map((id, i) => [id, 3 + i * 7])),
    );
    expect(doc.sessions.every((s: any) => s.integrity === 'ok')).toBe(true);
    expect((await agyctl(['backup', 'verify', doc.snapshot.path], sandbox)).exitCode).toBe(0);
  });

  it('a locked session fails alone while the others are snapshotted in parallel; --prometheus records it', async () => {
    sandbox = makeSandbox();
    await writer(sandbox, ids[0]!, ['--initial-rows', '2']);
    await writer(sandbox, ids[1]!, ['--initial-rows', '2', '--exclusive']);
    await writer(sandbox, ids[2]!, ['--initial-rows', '2']);
    const prom = path.join(sandbox.root, 'agyctl-backup.prom');
    const r = await agyctl(
      [
        'backup',
        '--to',
        path.join(sandbox.root, 'bk'),
        '--jobs',
        '2',
        '--busy-timeout',
        '1s',
        '--prometheus',
        prom,
        '--json',
      ],
      sandbox,
    );
    expect(r.exitCode).toBe(6);
    const doc = parseJson(r.stdout) as any;
    expect(doc.failed.map((f: any) => f.id)).toEqual([ids[1]]);
    expect(doc.failed[0].reason).toMatch(/stayed locked/);
    expect(doc.sessions.map((s: any) => s.id).sort()).toEqual([ids[0], ids[2]]);
    expect(doc.prometheus).toBe(prom);
    expect(metric(prom, 'agyctl_backup_ok')).toBe(0);
    expect(metric(prom, 'agyctl_backup_sessions_ok')).toBe(2);
    expect(metric(prom, 'agyctl_backup_sessions_failed')).toBe(1);
    expect(metric(prom, 'agyctl_backup_last_success_timestamp_seconds')).toBeUndefined();
  });

  it('a clean run writes ok 1 and its last success time; bad --jobs and --prometheus values are usage errors', async () => {
    sandbox = makeSandbox();
    await writer(sandbox, ids[0]!, ['--initial-rows', '2']);
    const prom = path.join(sandbox.root, 'agyctl-backup.prom');
    const before = Math.floor(Date.now() / 1000);
    expect(
      (await agyctl(['backup', '--to', path.join(sandbox.root, 'bk'), '--prometheus', prom], sandbox)).exitCode,
    ).toBe(0);
    expect(metric(prom, 'agyctl_backup_ok')).toBe(1);
    expect(metric(prom, 'agyctl_backup_last_success_timestamp_seconds')).toBeGreaterThanOrEqual(before);
    for (const bad of [
      ['--jobs', '0'],
      ['--jobs', 'many'],
      ['--prometheus', path.join(sandbox.root, 'nope', 'x.prom')],
    ]) {
      const r = await agyctl(['backup', '--to', path.join(sandbox.root, 'bk2'), ...bad], sandbox);
      expect(r.exitCode, bad.join(' ')).toBe(2);
    }
    expect(fs.existsSync(path.join(sandbox.root, 'bk2'))).toBe(false);
  });
});
