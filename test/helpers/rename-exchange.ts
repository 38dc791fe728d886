/**
 * Runs rename-exchange.py (names swapped with renameat2 RENAME_EXCHANGE, the
 * review's tool) as a test's user, until killed. Python's ctypes reaches
 * renameat2 without a compiler; Debian's python3 is there wherever ansible is.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'rename-exchange.py');
/** The system's python3: a user cannot run root's own (pyenv under /root). */
const PYTHON = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => fs.existsSync(p));

/**
 * `pairs A1 B1 ...`: exchange each pair over and over. `private DIR TARGET N NAME...`: replace each
 * private dir another run makes in DIR by a tree of N directories, each exchanged with a link to TARGET.
 */
export function renameExchange(user: { uid: number; gid: number }, args: string[]): ChildProcess {
  if (PYTHON === undefined)
    throw new Error('the rename races need python3 (/usr/bin/python3: apt-get install python3)');
  // The script goes in as text: the checkout may be in a directory the user cannot read.
  return spawn(PYTHON, ['-c', fs.readFileSync(SCRIPT, 'utf8'), ...args], {
    uid: user.uid,
    gid: user.gid,
    stdio: 'ignore',
  });
}
