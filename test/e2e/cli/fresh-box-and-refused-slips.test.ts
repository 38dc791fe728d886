/**
 * Ordinary situations that sent people the wrong way. A fresh
 * box (no conversations/ yet) is not an error; an empty HOME or --server is
 * refused instead of meaning "the current directory" / "search PATH"; a
 * manifest.json that is not JSON is a damaged snapshot (6), not a usage error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agyctl, makeSandbox, parseJson, type Sandbox, writeSettings } from '../../helpers/cli.js';

let sandbox: Sandbox | undefined;

describe('a fresh box: the state dir exists, conversations/ does not yet', () => {
  it('sessions: exit 0, "no conversations yet", an empty list in JSON', async () => {
    sandbox = makeSandbox();
    writeSettings(sandbox, { auth: { type: 'oauth-personal' } });
    const human = await agyctl(['sessions'], sandbox);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toContain('no conversations yet');
    const json = await agyctl(['sessions', '--json'], sandbox);
    expect(json.exitCode).toBe(0);
    expect(parseJson(json.stdout)).toMatchObject({ ok: true, sessions: [] });
  });

  it('backup: exit 0, "no conversations yet", no snapshot written', async () => {
    sandbox = makeSandbox();
    writeSettings(sandbox, { auth: { type: 'oauth-personal' } });
    const to = path.join(sandbox.root, 'backups');
    const human = await agyctl(['backup', '--to', to, '--keep-last', '3'], sandbox);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toContain('no conversations yet');
    const json = await agyctl(['backup', '--json', '--to', to], sandbox);
    expect(json.exitCode).toBe(0);
    expect(parseJson(json.stdout)).toMatchObject({ ok: true, snapshot: null, sessions: [], failed: [] });
    expect(fs.existsSync(to) ? fs.readdirSync(to) : []).toEqual([]);
  });
});

describe('slips that are refused', () => {
  it('HOME= (empty) and no --state-dir: settings set-auth refuses (exit 2) and writes nothing into the current directory', async () => {
    sandbox = makeSandbox();
    const cwd = path.join(sandbox.root, 'cwd');
    fs.mkdirSync(cwd);
    const r = await agyctl(['settings', 'set-auth', 'oauth-personal'], sandbox, { env: { HOME: '' }, cwd });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('HOME');
    expect(r.stderr).toContain('--state-dir');
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('--server "" refuses (exit 2) instead of searching PATH', async () => {
    sandbox = makeSandbox();
    const r = await agyctl(['probe', '--json', '--server', ''], sandbox);
    expect(r.exitCode).toBe(2);
    expect(parseJson(r.stdout)).toMatchObject({
      ok: false,
      error: { exit: 2, message: expect.stringContaining('--server') },
    });
  });
});

describe('a manifest.json that is not JSON', () => {
  function damagedSnapshot(box: Sandbox): string {
    const dir = path.join(box.root, 'backups', '2026-09-03T02-00-00.114Z');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'manifest.json'), '{"schemaVersion": 1, "kind": "agyctl-bac');
    return dir;
  }

  for (const command of [['restore'], ['backup', 'verify']]) {
    it(`${command.join(' ')}: exit 6, snapshot-damaged`, async () => {
      sandbox = makeSandbox();
      writeSettings(sandbox, { auth: { type: 'oauth-personal' } });
      const dir = damagedSnapshot(sandbox);
      const r = await agyctl([...command, dir, '--json'], sandbox);
      expect(r.exitCode, r.stdout + r.stderr).toBe(6);
      expect(parseJson(r.stdout)).toMatchObject({ ok: false, error: { code: 'snapshot-damaged', exit: 6 } });
    });
  }
});
