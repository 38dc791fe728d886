/** File-system errors become AgyErrors naming the path and the fix (a filesystem problem is never a bug); anything else stays a bug. */
import { describe, expect, it } from 'vitest';
import { fsAgyError } from '../../src/util/fs-errors.js';

const sysError = (code: string, path?: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`${code}: something, open '${path}'`), { code, ...(path ? { path, syscall: 'open' } : {}) });

describe('fsAgyError', () => {
  it.each([
    ['EACCES', 2, 'fs-permission-denied'],
    ['EPERM', 2, 'fs-permission-denied'],
    ['EROFS', 2, 'fs-read-only'],
    ['ENOTDIR', 2, 'fs-not-a-directory'],
    ['EISDIR', 2, 'fs-is-a-directory'],
    ['ENAMETOOLONG', 2, 'fs-name-too-long'],
    ['ELOOP', 2, 'fs-symlink-loop'],
    ['ENOENT', 2, 'fs-not-found'],
    ['ENOSPC', 6, 'fs-full'],
    ['EDQUOT', 6, 'fs-full'],
  ])('%s -> exit %i, %s, with the path and a fix', (code, exit, name) => {
    const err = fsAgyError(sysError(code, '/srv/backups/x'))!;
    expect(err).toMatchObject({ exit, code: name });
    expect(err.message).toContain('/srv/backups/x');
    expect(err.hint).toBeTruthy();
  });

  it('names the role of the directory holding the path, and uses the use case code for a full disk', () => {
    const err = fsAgyError(sysError('ENOSPC', '/srv/backups/.lock'), {
      roots: [{ dir: '/srv/backups', role: 'the backup directory', also: 'or use --to' }],
      fullCode: 'backup-write-failed',
    })!;
    expect(err).toMatchObject({ exit: 6, code: 'backup-write-failed' });
    expect(err.message).toMatch(/^the backup directory: \/srv\/backups\/\.lock/);
    expect(err.hint).toContain('--to');
  });

  it('a write through a descriptor (no path) names the default path only when the use case gives one', () => {
    expect(fsAgyError(sysError('ENOSPC'))).toBeUndefined();
    expect(fsAgyError(sysError('ENOSPC'), { defaultPath: '/srv/backups' })?.message).toContain('/srv/backups');
  });

  it('errors that are not file-system errors stay bugs', () => {
    expect(fsAgyError(new TypeError('x is undefined'))).toBeUndefined();
    expect(fsAgyError(sysError('ECONNRESET', '/x'))).toBeUndefined();
  });
});
