/**
 * The backup directory: `<UTC timestamp>/` for each complete snapshot,
 * `.<timestamp>.<random>.partial/` while a run works, `.<name>.deleting/` while
 * retention removes one, `.lock` while a run holds it. Only a directory with
 * a timestamp name and a manifest.json is a snapshot; anything else in the
 * directory is left alone except our own leftovers.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { lstatOrNull } from '../util/safe-fs.js';
import { MANIFEST } from './manifest.js';

const NAME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})Z$/;
const LEFTOVER = /^\.(.+)\.(partial|deleting)$/;

/** `2026-09-03T12-34-56.789Z`: sortable, no colons (rclone and other file systems dislike them). */
export function snapshotName(date: Date): string {
  return date.toISOString().replace(/:/g, '-');
}

export function parseSnapshotName(name: string): Date | undefined {
  const m = NAME.exec(name);
  if (!m) return undefined;
  const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** Random part: nobody who can write the backup directory can plant a link or a directory under the name the run will create. */
export const partialName = (name: string): string => `.${name}.${crypto.randomBytes(6).toString('hex')}.partial`;
export const deletingName = (name: string): string => `.${name}.deleting`;

export interface SnapshotRef {
  name: string;
  dir: string;
  created: Date;
}

/** Complete snapshots, newest first. */
export function listSnapshots(backupDir: string): SnapshotRef[] {
  let names: string[];
  try {
    names = fs.readdirSync(backupDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: SnapshotRef[] = [];
  for (const name of names) {
    const created = parseSnapshotName(name);
    const dir = path.join(backupDir, name);
    // A real directory only: a planted symlink must not make agyctl read (or reuse files from) somewhere else.
    if (created && lstatOrNull(dir)?.isDirectory() && lstatOrNull(path.join(dir, MANIFEST))?.isFile())
      out.push({ name, dir, created });
  }
  return out.sort((a, b) => b.name.localeCompare(a.name));
}

/** Remove what interrupted runs left (`.partial`, `.deleting`). Call only while holding the lock. */
export function removeLeftovers(backupDir: string): string[] {
  const removed: string[] = [];
  for (const name of fs.readdirSync(backupDir)) {
    if (!LEFTOVER.test(name)) continue;
    fs.rmSync(path.join(backupDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** A fresh snapshot name: never reuse an existing one, even if the clock stepped back. */
export function freshName(backupDir: string, now: Date): string {
  const entries = new Set(fs.readdirSync(backupDir));
  const taken = (name: string): boolean =>
    entries.has(name) || [...entries].some((e) => e.startsWith(`.${name}.`) && e.endsWith('.partial'));
  let t = now.getTime();
  for (;;) {
    // From the listing, so a dangling link planted under the next name counts as taken.
    const name = snapshotName(new Date(t));
    if (!taken(name)) return name;
    t += 1;
  }
}
