/**
 * What a manifest says (written by a user's side, or planted) is checked
 * against limits and formats before it is stored or shown, and what is shown
 * on root's terminal is one line with no control characters. The backup
 * summary counts every byte a snapshot holds, brain/ and .meta included.
 */
import { describe, expect, it } from 'vitest';
import { checkManifest, type ManifestSession } from '../../src/backup/manifest.js';
import type { BackupReport } from '../../src/backup/run-backup.js';
import { formatBytes } from '../../src/cli/commands/backup/progress.js';
import { renderBackup } from '../../src/cli/commands/backup/render.js';
import { renderVerify } from '../../src/cli/commands/backup/verify.js';

const ID = '55555555-5555-4555-8555-555555555555';
const H = 'a'.repeat(64);

const session = (extra: Partial<ManifestSession> = {}): ManifestSession =>
  ({
    id: ID,
    file: `${ID}.db`,
    bytes: 1000,
    sha256: H,
    cwd: '/home/u/proj',
    integrity: 'ok',
    rows: { steps: 3 },
    meta: { file: `${ID}.meta`, bytes: 24, sha256: H },
    reused: false,
    source: { db: null, wal: null, checkedAt: '' },
    ...extra,
  }) as unknown as ManifestSession;

const manifest = (extra: Record<string, unknown> = {}, s: ManifestSession = session()): unknown => ({
  schemaVersion: 2,
  kind: 'agyctl-backup',
  created: '2026-01-01T00:00:00.000Z',
  host: 'box',
  agyctlVersion: '0',
  sourceStateDir: '/home/u/.gemini/antigravity-acp',
  sessions: [s],
  failed: [],
  ...extra,
});

describe("a manifest's fields are bounded", () => {
  it('accepts a well-formed manifest, with or without the source fields', () => {
    expect(checkManifest(manifest(), 'm').sessions).toHaveLength(1);
    expect(checkManifest(manifest({ sourceRealpath: '/home/u/x', sourceUid: 1000 }), 'm').sourceUid).toBe(1000);
  });

  it.each([
    ['a failed reason that is not text', { failed: [{ id: ID, reason: { evil: true } }] }],
    ['a failed reason of a megabyte', { failed: [{ id: ID, reason: 'x'.repeat(1 << 20) }] }],
    ['a failed entry without an id', { failed: [{ reason: 'r' }] }],
    ['a sourceStateDir that is not text', { sourceStateDir: 42 }],
    ['a host of 10 000 characters', { host: 'h'.repeat(10_000) }],
    ['a negative sourceUid', { sourceUid: -1 }],
  ])('refuses %s', (_, extra) => {
    expect(() => checkManifest(manifest(extra), 'm')).toThrow(/malformed/);
  });

  it.each([
    ['a cwd of 100 000 characters', session({ cwd: '/x'.repeat(50_000) })],
    ['rows that are not counts', session({ rows: { steps: -5 } })],
    ['an integrity that is not text', session({ integrity: 7 as unknown as string })],
    ['a size that is negative', session({ bytes: -1 })],
    ['a sha256 that is not 64 hex digits', session({ sha256: `${H}\x1b[2J` })],
    ['a .meta sha256 of another shape', session({ meta: { file: `${ID}.meta`, bytes: 24, sha256: 'x' } })],
    [
      'a brain file of a negative size',
      session({ brain: { files: [{ path: 'a.md', bytes: -5, sha256: H }], skipped: [], checkedAt: '' } as never }),
    ],
    [
      'a skipped brain path that is not text',
      session({ brain: { files: [], skipped: [{ path: 5, reason: 'r' }], checkedAt: '' } as never }),
    ],
  ])('refuses a session with %s', (_, s) => {
    expect(() => checkManifest(manifest({}, s), 'm')).toThrow(/malformed/);
  });
});

describe("what root shows of a manifest's text", () => {
  const evil = 'boom\x1b]0;PWNED\x07\x1b[2J\x9b31m\nsecond line';

  it('backup: a failed reason is one line with no control characters', () => {
    const report = {
      backupDir: '/b',
      snapshot: { name: 's', path: '/b/s', created: '' },
      sessions: [],
      failed: [{ id: ID, reason: evil }],
      cleanedUp: [],
      retention: null,
      elapsedMs: 5,
    } as BackupReport;
    const lines = renderBackup(report);
    for (const line of lines) expect(line).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
    expect(lines.join('\n')).toContain(`failed ${ID}: boom`);
  });

  it('backup verify: names, problems and reasons are one line with no control characters', () => {
    const lines = renderVerify({
      snapshot: '/b/s',
      created: '',
      ok: false,
      sessions: [{ id: ID, file: `${ID}.db`, ok: false, problems: [`brain/${ID}/${evil}: missing`] }],
      failedAtBackup: [{ id: ID, reason: evil }],
      replay: null,
    });
    for (const line of lines) expect(line).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  });

  it('the summary counts every byte of the snapshot: database, .meta and brain/', () => {
    const s = session({
      brain: {
        files: [{ path: 'plan.md', bytes: 1_000_000, sha256: H, source: {} }],
        skipped: [],
        checkedAt: '',
      } as never,
    });
    const lines = renderBackup({
      backupDir: '/b',
      snapshot: { name: 's', path: '/b/s', created: '' },
      sessions: [s],
      failed: [],
      cleanedUp: [],
      retention: null,
      elapsedMs: 5,
    } as BackupReport);
    expect(lines[1]).toContain(`; ${formatBytes(1_001_024)} in`); // 1 000 000 + 1000 + 24 bytes, not 1000 B
    expect(formatBytes(1_001_024)).not.toBe(formatBytes(1000));
  });
});
