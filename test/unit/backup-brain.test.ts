// brain/<id>/ as backup sees it: only plain names inside it, bounded depth,
// links and special files never followed (reported as skipped).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BRAIN_LIMITS, scanBrain, validBrainPath } from '../../src/backup/brain.js';
import { checkManifest } from '../../src/backup/manifest.js';
import { useScratch } from '../helpers/scratch.js';

const { tmp } = useScratch('agyctl-brain-');
const ID = '4d5a6c89-0be5-4d98-ac4d-dede75c780fe';

describe('brain paths', () => {
  it.each([
    ['implementation_plan.md', true],
    ['notes/deep/task.md', true],
    ['../x', false],
    ['a/../../x', false],
    ['/etc/passwd', false],
    ['a//b', false],
    ['./a', false],
    ['a\\b', false],
    ['bad\u001b[2Jname', false],
    [Array.from({ length: BRAIN_LIMITS.depth + 2 }, () => 'd').join('/'), false],
    ['x'.repeat(300), false],
  ])('%j is accepted: %s', (p, ok) => {
    expect(validBrainPath(ID, p)).toBe(ok);
  });

  it('a manifest naming a brain file outside brain/<id>/ is malformed; one without brain (schemaVersion 1) reads', () => {
    const manifest = (brain: unknown, schemaVersion = 2): unknown => ({
      schemaVersion,
      kind: 'agyctl-backup',
      sessions: [
        {
          id: ID,
          file: `${ID}.db`,
          bytes: 1,
          sha256: 'a'.repeat(64),
          meta: null,
          ...(brain === undefined ? {} : { brain }),
        },
      ],
    });
    expect(checkManifest(manifest(undefined, 1), 'm').sessions[0]!.brain).toBeUndefined();
    const files = (p: string) => ({
      files: [{ path: p, bytes: 1, sha256: 'a'.repeat(64) }],
      skipped: [],
      checkedAt: '',
    });
    expect(() => checkManifest(manifest(files('../../conversations/x.db')), 'm')).toThrow(/malformed/);
    expect(checkManifest(manifest(files('plan.md')), 'm').sessions[0]!.brain!.files).toHaveLength(1);
    const twice = { files: [files('a').files[0], files('a/b').files[0]], skipped: [], checkedAt: '' };
    expect(() => checkManifest(manifest(twice), 'm')).toThrow(/malformed/);
  });
});

describe('scanBrain', () => {
  it('lists regular files; skips links, FIFOs, bad names and directories nested too deep', () => {
    const state = tmp();
    const root = path.join(state, 'brain', ID);
    fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(root, 'plan.md'), 'p');
    fs.writeFileSync(path.join(root, 'sub', 'task.md'), 't');
    fs.symlinkSync('/etc/passwd', path.join(root, 'link.md'));
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    fs.writeFileSync(path.join(root, 'esc\u001b]0;x\u0007.md'), 'e');
    const deep = path.join(root, ...Array.from({ length: BRAIN_LIMITS.depth + 1 }, (_, i) => `d${i}`));
    fs.mkdirSync(deep, { recursive: true });
    fs.writeFileSync(path.join(deep, 'too-deep.md'), 'x');
    const scan = scanBrain(state, ID)!;
    expect(scan.found.map((f) => f.path).sort()).toEqual(['plan.md', 'sub/task.md']);
    const skipped = Object.fromEntries(scan.skipped.map((s) => [s.path, s.reason]));
    expect(skipped['link.md']).toMatch(/symbolic link; not followed/);
    expect(skipped.fifo).toMatch(/not a regular file/);
    expect(Object.values(skipped).some((r) => /does not accept/.test(r))).toBe(true);
    expect(Object.entries(skipped).some(([p, r]) => p.endsWith(`d${BRAIN_LIMITS.depth}`) && /deeper/.test(r))).toBe(
      true,
    );
  });

  it('a brain directory that is a link is skipped whole; no brain directory is null', () => {
    const state = tmp();
    expect(scanBrain(state, ID)).toBeNull();
    const elsewhere = tmp();
    fs.writeFileSync(path.join(elsewhere, 'secret'), 's');
    fs.mkdirSync(path.join(state, 'brain'));
    fs.symlinkSync(elsewhere, path.join(state, 'brain', ID));
    const scan = scanBrain(state, ID)!;
    expect(scan.found).toEqual([]);
    expect(scan.skipped).toEqual([{ path: '.', reason: `brain/${ID} is a symbolic link; not followed` }]);
  });
});
