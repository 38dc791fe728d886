/**
 * Where an archive's entries land: a fresh staging directory, written
 * entry by entry with every refusal an archive can earn (exit 6,
 * `server-archive-refused`): names that leave the directory (`..`, absolute
 * paths), links that point out of it, device files and FIFOs, setuid and
 * setgid bits, the same name twice, and more bytes than the disk has.
 *
 * Symlinks and hard links are made last, after every file and directory,
 * so no entry is ever written through a link. A symlink's target must be
 * relative, may start with `..` components only (never `x/..`, which a link
 * named x could turn outward), and must stay inside the directory. Modes
 * are set on descriptors at the end: as in the archive, less group and
 * other write for root's installs (root's tree no one else can write).
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT } from '../core/errors.js';
import { showUntrusted } from '../core/safe-path.js';
import { createExclusive } from '../util/os/safe-fs.js';

export type EntryKind = 'file' | 'dir' | 'symlink' | 'hardlink' | 'other';

export interface ArchiveEntry {
  name: string;
  kind: EntryKind;
  /** Permission bits as the archive gives them (setuid/setgid included, for the refusal). */
  mode: number;
  /** symlink/hardlink: the target as the archive gives it. */
  link?: string;
}

export const refused = (message: string, hint = 'use the archive as published; check where it came from'): AgyError =>
  new AgyError(EXIT.findings, 'server-archive-refused', message, { hint });

/** Space kept free on the filesystem: an install never fills a disk to the last block. */
const RESERVE_BYTES = 16 * 1024 * 1024;

/** Free bytes on the filesystem holding `dir` (for an unprivileged caller). */
export function freeBytes(dir: string): number {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}

/** The entry's path components, or a refusal: absolute, `..`, NUL or backslash, or nothing left. */
export function entryParts(name: string): string[] {
  const shown = showUntrusted(name, 120);
  if (name.startsWith('/')) throw refused(`The archive has an entry with an absolute path (${shown}).`);
  if (name.includes('\0') || name.includes('\\')) throw refused(`The archive has an entry with a bad name (${shown}).`);
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw refused(`The archive has an entry that leaves its directory (${shown}).`);
  return parts;
}

/** A symlink target that stays inside: relative, `..` only at its start, resolving under root. */
export function checkLinkTarget(root: string, entryPath: string, target: string): void {
  const shown = `${showUntrusted(path.relative(root, entryPath), 80)} -> ${showUntrusted(target, 80)}`;
  if (target === '' || target.startsWith('/') || target.includes('\0'))
    throw refused(`The archive has a link out of its directory (${shown}).`);
  const parts = target.split('/').filter((p) => p !== '' && p !== '.');
  const firstOther = parts.findIndex((p) => p !== '..');
  if (firstOther >= 0 && parts.slice(firstOther).includes('..'))
    throw refused(`The archive has a link that could lead out of its directory (${shown}).`);
  const resolved = path.resolve(path.dirname(entryPath), target);
  if (resolved !== root && !resolved.startsWith(`${root}${path.sep}`))
    throw refused(`The archive has a link out of its directory (${shown}).`);
}

export interface UnpackOptions {
  /** Remove group and other write bits (root's installs). */
  dropGroupOtherWrite: boolean;
  signal: AbortSignal;
}

export class UnpackTarget {
  readonly root: string;
  private readonly opts: UnpackOptions;
  private readonly seen = new Set<string>();
  private readonly modes = new Map<string, number>();
  private readonly links: Array<{ at: string; entry: ArchiveEntry }> = [];
  private free: number;
  bytes = 0;

  constructor(root: string, opts: UnpackOptions) {
    this.root = path.resolve(root);
    this.opts = opts;
    this.free = freeBytes(this.root) - RESERVE_BYTES;
  }

  /** Checks one entry and returns where it goes; creates its parent directories. */
  private place(entry: ArchiveEntry): string {
    if (this.opts.signal.aborted) throw this.opts.signal.reason;
    const parts = entryParts(entry.name);
    if (parts.length === 0) {
      if (entry.kind === 'dir') return this.root;
      throw refused(`The archive has an entry with no name (${showUntrusted(entry.name)}).`);
    }
    const at = path.join(this.root, ...parts);
    const shown = showUntrusted(parts.join('/'), 120);
    if (entry.kind === 'other') throw refused(`The archive has a device file, FIFO or socket (${shown}).`);
    if ((entry.mode & 0o6000) !== 0) throw refused(`The archive has a setuid or setgid file (${shown}).`);
    if (entry.kind !== 'dir' && this.seen.has(at)) throw refused(`The archive has ${shown} twice.`);
    this.seen.add(at);
    let dir = this.root;
    for (const part of parts.slice(0, -1)) {
      dir = path.join(dir, part);
      this.mkdir(dir);
    }
    return at;
  }

  private mkdir(dir: string): void {
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
      if (!this.modes.has(dir)) this.modes.set(dir, 0o755);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.lstatSync(dir).isDirectory())
        throw refused(`The archive puts an entry under a file (${showUntrusted(path.relative(this.root, dir))}).`);
    }
  }

  /** A directory entry: created now, its mode set at the end. */
  directory(entry: ArchiveEntry): void {
    const at = this.place(entry);
    if (at !== this.root) this.mkdir(at);
    this.modes.set(at, entry.mode & 0o777);
  }

  /** A link entry: checked now, made after every file. */
  link(entry: ArchiveEntry): void {
    const at = this.place(entry);
    if (entry.kind === 'symlink') checkLinkTarget(this.root, at, entry.link ?? '');
    this.links.push({ at, entry });
  }

  /**
   * A regular file of `size` bytes (when the archive says), its content from
   * `chunks`; refused when it would outrun the free space, or when the
   * content is longer or shorter than `size`.
   */
  async file(entry: ArchiveEntry, size: number | undefined, chunks: AsyncIterable<Buffer>): Promise<void> {
    const at = this.place(entry);
    if (size !== undefined) this.claim(size, entry.name);
    const fd = createExclusive(at, 0o600);
    let written = 0;
    try {
      for await (const chunk of chunks) {
        if (this.opts.signal.aborted) throw this.opts.signal.reason;
        written += chunk.length;
        if (size !== undefined && written > size)
          throw refused(`The archive's entry ${showUntrusted(entry.name)} holds more bytes than it declares.`);
        if (size === undefined) this.claim(chunk.length, entry.name);
        writeAll(fd, chunk);
      }
      if (size !== undefined && written !== size)
        throw refused(`The archive's entry ${showUntrusted(entry.name)} is cut short (damaged or truncated archive).`);
      fs.fchmodSync(fd, this.fileMode(entry.mode));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw this.outOfSpace(entry.name);
      throw err;
    } finally {
      fs.closeSync(fd);
    }
    this.bytes += written;
  }

  private claim(bytes: number, name: string): void {
    this.free -= bytes;
    if (this.free < 0) throw this.outOfSpace(name);
  }

  private outOfSpace(name: string): AgyError {
    return new AgyError(
      EXIT.findings,
      'server-archive-too-large',
      `The archive unpacks to more than the free space of ${this.root} (at ${showUntrusted(name)}); nothing was installed.`,
      { hint: 'free space on that filesystem, or install under another --prefix' },
    );
  }

  private fileMode(mode: number): number {
    const bits = mode & 0o777;
    return this.opts.dropGroupOtherWrite ? bits & ~0o022 : bits;
  }

  /** Makes the links, then sets directory modes deepest first. */
  finish(): void {
    for (const { at, entry } of this.links) {
      try {
        if (entry.kind === 'symlink') fs.symlinkSync(entry.link ?? '', at);
        else this.hardlink(at, entry);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        if (!['EEXIST', 'ENOTDIR', 'ENOENT'].includes(code)) throw err;
        throw refused(`The archive's link ${showUntrusted(entry.name)} collides with another entry.`);
      }
    }
    const dirs = [...this.modes.entries()].sort((a, b) => b[0].length - a[0].length);
    for (const [dir, mode] of dirs) fs.chmodSync(dir, this.fileMode(mode));
  }

  /** A hard link only to a regular file this archive already gave. */
  private hardlink(at: string, entry: ArchiveEntry): void {
    const parts = entryParts(entry.link ?? '');
    const target = path.join(this.root, ...parts);
    const st = parts.length > 0 ? fs.lstatSync(target, { throwIfNoEntry: false }) : undefined;
    if (!this.seen.has(target) || !st?.isFile())
      throw refused(`The archive has a hard link to something it does not hold (${showUntrusted(entry.name)}).`);
    fs.linkSync(target, at);
  }
}

function writeAll(fd: number, chunk: Buffer): void {
  let offset = 0;
  while (offset < chunk.length) offset += fs.writeSync(fd, chunk, offset, chunk.length - offset);
}
