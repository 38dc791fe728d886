/**
 * Fake server builds, made by the tests as zip and tar.gz archives: an
 * `agy_acp_server.par` (a launcher script that runs the simulator, and
 * refuses to start without a `localharness_external` beside itself, as the
 * real build needs it; it keeps its own path as the process's argv[0], as
 * the real binary's is) and that `localharness_external`. The writers take
 * any entry a hostile archive could hold: `..` names, absolute paths,
 * symlinks, setuid modes, device files, sizes that lie.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';

export interface FakeEntry {
  name: string;
  type?: 'file' | 'dir' | 'symlink' | 'hardlink' | 'chardev' | 'fifo';
  /** Permission bits (0o4755 for setuid). */
  mode?: number;
  data?: Buffer | string;
  /** symlink / hardlink target. */
  link?: string;
  /** zip: the unpacked size the central directory declares (a lie when it differs from data). */
  declaredSize?: number;
}

/** The simulator's switches a fake build bakes in: `{AGY_SIM_EXIT_AT_START: '70'}` is a build that does not start. */
export function launcher(sim: string, simEnv: Record<string, string> = {}, node = process.execPath): string {
  const exports = Object.entries(simEnv)
    .map(([k, v]) => `export ${k}='${v}'\n`)
    .join('');
  return `#!/bin/bash
here=$(dirname "$0")
if [ ! -f "$here/localharness_external" ]; then
  echo "agy_acp_server.par: localharness_external is missing beside me" >&2
  exit 71
fi
${exports}exec -a "$0" '${node}' '${sim}' "$@"
`;
}

/** The entries of a fake build: the launcher and its localharness_external. */
export function fakeBuild(sim: string, simEnv: Record<string, string> = {}, padBytes = 1024): FakeEntry[] {
  return [
    { name: 'agy_acp_server.par', mode: 0o755, data: launcher(sim, simEnv) },
    { name: 'localharness_external', mode: 0o755, data: crypto.randomBytes(padBytes) },
  ];
}

const TYPE_BITS = {
  file: 0o100000,
  dir: 0o040000,
  symlink: 0o120000,
  hardlink: 0o100000,
  chardev: 0o020000,
  fifo: 0o010000,
};

/** A zip (deflated entries; symlinks as Unix mode + target, as Info-ZIP writes them). */
export function writeZip(file: string, entries: FakeEntry[]): void {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const type = e.type ?? 'file';
    const raw = Buffer.from(type === 'symlink' ? (e.link ?? '') : (e.data ?? ''));
    const data = zlib.deflateRawSync(raw);
    const name = Buffer.from(type === 'dir' && !e.name.endsWith('/') ? `${e.name}/` : e.name);
    const size = e.declaredSize ?? raw.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    const mode = (TYPE_BITS[type] | (e.mode ?? (type === 'dir' ? 0o755 : 0o644))) >>> 0;
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + data.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  fs.writeFileSync(file, Buffer.concat([...locals, dir, end]));
}

function tarHeader(e: FakeEntry, size: number): Buffer {
  const h = Buffer.alloc(512);
  const type = e.type ?? 'file';
  h.write(e.name, 0, 100, 'utf8');
  h.write(`${(e.mode ?? (type === 'dir' ? 0o755 : 0o644)).toString(8).padStart(7, '0')}\0`, 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.fill(0x20, 148, 156);
  h.write({ file: '0', dir: '5', symlink: '2', hardlink: '1', chardev: '3', fifo: '6' }[type], 156);
  if (e.link) h.write(e.link, 157, 100, 'utf8');
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

/** A tar.gz; a file entry may be `zeros` bytes of zeros, streamed (a huge entry that compresses to little). */
export async function writeTarGz(file: string, entries: Array<FakeEntry & { zeros?: number }>): Promise<void> {
  const gz = zlib.createGzip({ level: 1 });
  const out = fs.createWriteStream(file);
  const done = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  gz.pipe(out);
  const write = async (b: Buffer): Promise<void> => {
    if (!gz.write(b)) await new Promise((r) => gz.once('drain', r));
  };
  for (const e of entries) {
    const data = Buffer.from(e.data ?? '');
    const size = e.zeros ?? ((e.type ?? 'file') === 'file' ? data.length : 0);
    await write(tarHeader(e, size));
    if (e.zeros !== undefined) {
      const chunk = Buffer.alloc(1024 * 1024);
      for (let left = e.zeros; left > 0; left -= chunk.length)
        await write(left >= chunk.length ? chunk : chunk.subarray(0, left));
    } else if (size > 0) await write(data);
    if (size % 512) await write(Buffer.alloc(512 - (size % 512)));
  }
  await write(Buffer.alloc(1024));
  gz.end();
  await done;
}

export const sha256Of = (file: string): string =>
  crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
