/**
 * `backup verify SNAP --prove`: the snapshot restored into a scratch state
 * dir, so the live conversations are never touched. Layout, inside a 0700
 * temporary HOME that is removed on every exit path (scratch-dir.ts):
 *
 *   <tmp>/home/.gemini/antigravity-acp/settings.json   -> symlink to the box's
 *   <tmp>/home/.gemini/antigravity-acp/acp_token.json  -> symlink to the box's
 *   <tmp>/home/.gemini/antigravity-acp/conversations/  the restored copies
 *
 * The credential is never copied: a symlink is all that exists, and it dies
 * with the directory. A server that replaces the file (write + rename, as the
 * simulator and atomic writers do) replaces only the link, never the box's
 * token; one that rewrote it in place would write the box's own file, as
 * the box's server itself does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { STATE_SUBDIR, stateFiles } from '../core/paths.js';

/** Creates the scratch state dir under `scratchRoot` and returns its path. */
export function scratchStateDir(scratchRoot: string, boxStateDir: string): string {
  const stateDir = path.join(scratchRoot, 'home', STATE_SUBDIR);
  fs.mkdirSync(path.join(stateDir, 'conversations'), { recursive: true, mode: 0o700 });
  const box = stateFiles(boxStateDir);
  const mine = stateFiles(stateDir);
  for (const key of ['settings', 'token'] as const) {
    if (fs.existsSync(box[key])) fs.symlinkSync(box[key], mine[key]);
  }
  return stateDir;
}
