/**
 * SIGTERM during `restore --archive -` (every child dies with us): inside a large entry,
 * and with stdin stalled (the writer sent part of an entry and stopped),
 * agyctl ends at once with exit 130, leaves no staging dir and writes
 * nothing into the state dir. The archive is generated here: a manifest
 * that lists a 2 GiB database, then only its first megabytes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileHeader, padding } from '../../../src/backup/tar.js';
import { type Sandbox, spawnAgyctl } from '../../helpers/cli.js';
import { authedSandbox } from '../../helpers/sim-conversations.js';

const ID = '33333333-3333-4333-8333-333333333333';
const BIG = 2 * 1024 ** 3;

let sandbox: Sandbox | undefined;

function manifestEntry(): Buffer {
  const manifest = {
    schemaVersion: 1,
    kind: 'agyctl-backup',
    created: new Date().toISOString(),
    host: 'test',
    agyctlVersion: '0.1.0',
    sourceStateDir: '/nowhere',
    sessions: [
      {
        id: ID,
        file: `${ID}.db`,
        bytes: BIG,
        sha256: 'a'.repeat(64),
        cwd: '/w',
        integrity: 'ok',
        rows: {},
        meta: null,
        reused: false,
      },
    ],
    failed: [],
  };
  const body = Buffer.from(JSON.stringify(manifest));
  return Buffer.concat([fileHeader('manifest.json', body.length, 0), body, padding(body.length)]);
}

describe('restore --archive - and SIGTERM', () => {
  it('inside a 2 GiB entry with stdin stalled: exit 130, no staging dir, nothing written', async () => {
    sandbox = authedSandbox();
    fs.mkdirSync(path.join(sandbox.stateDir, 'conversations'));
    const before = fs.readdirSync(path.join(sandbox.stateDir, 'conversations'));
    const child = spawnAgyctl(['restore', '--archive', '-'], sandbox, { timeoutMs: 15_000 });
    child.stdin!.write(manifestEntry());
    child.stdin!.write(fileHeader(`${ID}.db`, BIG, 0));
    // Not zeros: runs of zeros are staged as holes, which the size seen here would not show.
    child.stdin!.write(Buffer.alloc(4 * 1024 * 1024, 0x61)); // then nothing more: the writer stalls, stdin stays open
    const staged = (): number => {
      for (const d of fs.readdirSync(sandbox!.root).filter((n) => n.startsWith('agyctl-archive-'))) {
        const f = path.join(sandbox!.root, d, `${ID}.db`);
        if (fs.existsSync(f)) return fs.statSync(f).size;
      }
      return 0;
    };
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && staged() < 4 * 1024 * 1024) await new Promise((r) => setTimeout(r, 50));
    expect(staged()).toBe(4 * 1024 * 1024);
    child.kill('SIGTERM');
    const r = await child; // the helper's deadline ends a hung agyctl, which fails the next line
    expect(r.exitCode).toBe(130);
    expect(fs.readdirSync(sandbox.root).filter((n) => n.startsWith('agyctl-archive-'))).toEqual([]);
    expect(fs.readdirSync(path.join(sandbox.stateDir, 'conversations'))).toEqual(before);
  });
});
