/**
 * `backup verify SNAP --prove`: the snapshot restored into a scratch state
 * dir, so the live conversations are never touched. Layout, inside a 0700
 * temporary directory that is removed on every exit path (scratch-dir.ts):
 *
 *   <tmp>/home/.gemini/antigravity-acp/settings.json    0600 copy of the box's
 *   <tmp>/home/.gemini/antigravity-acp/acp_token.json   0600 copy of the box's
 *   <tmp>/home/.gemini/antigravity-acp/conversations/   the restored copies
 *
 * Copies, not links: a server that writes its settings or token in place
 * (any O_TRUNC write) would write through a link into the box's own files.
 * The token copy is the one place agyctl copies the token; it lives only
 * in our private directory and goes with it (docs/security.md). The box's
 * files are hashed before the run and checked after it (`changedOnBox`):
 * a server that reached them some other way (a fixed path, the password
 * database's home) is caught and reported, never silently accepted.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT } from '../core/errors.js';
import { STATE_SUBDIR, stateFiles } from '../core/paths.js';
import { sha256, sha256File } from '../util/os/file-hash.js';
import { lstatOrNull, readFileNoFollow, writeNewFile } from '../util/os/safe-fs.js';
import { ownerToBecome } from '../util/os/tree-owner.js';

export interface BorrowedFile {
  name: string;
  /** The box's file. */
  box: string;
  /** Its sha256 when the scratch dir was made; null when the box has none. */
  sha256: string | null;
}

export interface ScratchState {
  stateDir: string;
  borrowed: BorrowedFile[];
}

function contentHash(file: string): string | null {
  if (lstatOrNull(file) === null) return null;
  return sha256File(file);
}

/** Root does not borrow another user's settings and token for a server of its own (exit 2, `credentials-of-another-user`). */
export function assertMayBorrow(boxStateDir: string): void {
  const owner = ownerToBecome(boxStateDir);
  if (owner)
    throw new AgyError(
      EXIT.usage,
      'credentials-of-another-user',
      `The state dir ${boxStateDir} belongs to ${owner.name}: root does not copy that user's settings and token into a server of its own. Nothing was changed.`,
      {
        hint: `prove as the owner: restore with --prove (it runs as ${owner.name}), or run the proof as ${owner.name} (sudo -u ${owner.name} agyctl …) on a backup dir ${owner.name} can read`,
      },
    );
}

/** Creates the scratch state dir under `scratchRoot` (a private dir of ours) with 0600 copies of the box's settings and token. */
export function scratchStateDir(scratchRoot: string, boxStateDir: string): ScratchState {
  assertMayBorrow(boxStateDir);
  const stateDir = path.join(scratchRoot, 'home', STATE_SUBDIR);
  fs.mkdirSync(path.join(stateDir, 'conversations'), { recursive: true, mode: 0o700 });
  const box = stateFiles(boxStateDir);
  const mine = stateFiles(stateDir);
  const borrowed: BorrowedFile[] = [];
  for (const key of ['settings', 'token'] as const) {
    const name = path.basename(box[key]);
    if (lstatOrNull(box[key]) === null) {
      borrowed.push({ name, box: box[key], sha256: null });
      continue;
    }
    const data = readFileNoFollow(box[key], `the box's ${name}`); // a link is refused, never followed
    writeNewFile(mine[key], data, 0o600);
    borrowed.push({ name, box: box[key], sha256: sha256(data) });
  }
  return { stateDir, borrowed };
}

/** The box's files that are no longer byte-identical to what they were when the scratch dir was made. */
export function changedOnBox(state: ScratchState): string[] {
  const changed: string[] = [];
  for (const f of state.borrowed) {
    let now: string | null;
    try {
      now = contentHash(f.box);
    } catch {
      now = 'unreadable';
    }
    if (now !== f.sha256) changed.push(f.name);
  }
  return changed;
}
