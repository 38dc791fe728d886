/**
 * Private temporary directories (mode 0700) that never outlive the run: removed
 * in `finally`, and by a process 'exit' hook as well, which also runs when a
 * second Ctrl-C ends the process at once. (Only SIGKILL or power loss can leave
 * one; none of them ever holds a copy of a credential, see prove-scratch.ts.)
 */
import fs from 'node:fs';
import path from 'node:path';

export async function withScratchDir<T>(root: string, prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(root, prefix));
  fs.chmodSync(dir, 0o700);
  const remove = (): void => fs.rmSync(dir, { recursive: true, force: true });
  process.on('exit', remove);
  try {
    return await fn(dir);
  } finally {
    process.off('exit', remove);
    remove();
  }
}
