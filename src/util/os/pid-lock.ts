/**
 * Lock files that name the process holding them: backup's run lock, the
 * login start claim, the owner of a private temp dir. One rule for all:
 * - a lock appears whole (`createWithContent`: written beside it, then
 *   hard-linked into place), so a reader never takes a half-written lock
 *   for a dead one; on a file system without hard links it is created
 *   O_EXCL and written, and a lock that names no holder yet is held while
 *   it is younger than `unnamedGraceMs`;
 * - a lock whose holder is gone (util/os/process.ts decides) is stale: it is
 *   removed only if it still says what was read, then taken once more;
 * - release removes the lock only while it still holds what we wrote.
 * Never through a link: creation is O_EXCL (a link there is EEXIST), reads
 * are O_NOFOLLOW.
 */
import fs from 'node:fs';
import { createWithContent } from './atomic-write.js';
import { processStart } from './process.js';
import { lstatOrNull, readFileNoFollow, writeNewFile } from './safe-fs.js';

export interface PidLockRules<H> {
  /** What this process writes into the lock. */
  content: string;
  /** The holder a lock's text names; undefined when it names none (empty, half-written, not ours). */
  parse(text: string): H | undefined;
  /** Whether that holder still holds the lock. */
  alive(holder: H): boolean;
  /** A lock naming no holder is held while younger than this (it is being written); without it, it is stale. */
  unnamedGraceMs?: number;
  /** Called on a lock that is there before it is read; may throw (the backup lock names a planted link or FIFO). */
  inspect?(file: string): void;
}

export type PidLock<H> =
  | { taken: true; release(): void }
  /** `held`: a live holder has it; `contended`: it is being written, or others took it twice meanwhile. */
  | { taken: false; why: 'held' | 'contended'; holder: H | undefined };

export function takePidLock<H>(file: string, rules: PidLockRules<H>): PidLock<H> {
  for (let attempt = 0; attempt < 2; attempt++) {
    if (createLock(file, rules.content)) return { taken: true, release: () => releaseLock(file, rules.content) };
    rules.inspect?.(file);
    const text = readLock(file);
    if (text === undefined) continue; // let go meanwhile
    const holder = rules.parse(text);
    if (holder === undefined && rules.unnamedGraceMs !== undefined && youngerThan(file, rules.unnamedGraceMs))
      return { taken: false, why: 'contended', holder };
    if (holder !== undefined && rules.alive(holder)) return { taken: false, why: 'held', holder };
    if (readLock(file) === text) fs.rmSync(file, { force: true }); // stale, and nobody took it since we read it
  }
  const text = readLock(file);
  return { taken: false, why: 'contended', holder: text === undefined ? undefined : rules.parse(text) };
}

/** `<pid> <start>`: this process, as the login claim and private dirs' owner files record it. */
export const holderLine = (): string => `${process.pid} ${processStart(process.pid) ?? '-'}\n`;

/** A `holderLine` read back; a start of `-` (or none, from older agyctl) is unknown. */
export function parseHolderLine(text: string): { pid: number; start: string | undefined } | undefined {
  const [pidText, start] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { pid, start: start === undefined || start === '-' ? undefined : start };
}

/** Errors of link(2) on a file system that has no hard links (FAT, some FUSE mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

function createLock(file: string, content: string): boolean {
  try {
    return createWithContent(file, content);
  } catch (err) {
    if (!NO_HARD_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
  }
  try {
    writeNewFile(file, Buffer.from(content), 0o600);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** The lock's text; undefined when there is none, '' when it cannot be read (it names no holder). */
function readLock(file: string): string | undefined {
  try {
    return readFileNoFollow(file).toString('utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : '';
  }
}

function youngerThan(file: string, ms: number): boolean {
  const st = lstatOrNull(file);
  return st !== null && Date.now() - st.mtimeMs < ms;
}

function releaseLock(file: string, content: string): void {
  if (readLock(file) === content) fs.rmSync(file, { force: true });
}
