/**
 * What other processes are doing, read from /proc: which servers run against
 * a state dir, and who holds a conversation database open. Linux only; on
 * other systems every answer is "none found", never an error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { STATE_SUBDIR } from '../core/paths.js';
import { processUid } from './os/process.js';

export interface ProcInfo {
  pid: number;
  uid: number;
  argv: string[];
}

const PROC = '/proc';

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

export function listProcesses(): ProcInfo[] {
  let entries: string[];
  try {
    entries = fs.readdirSync(PROC);
  } catch {
    return [];
  }
  const out: ProcInfo[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const cmdline = readText(path.join(PROC, name, 'cmdline'));
    const uid = processUid(pid);
    if (cmdline === undefined || cmdline === '' || uid === undefined) continue;
    out.push({ pid, uid, argv: cmdline.replace(/\0$/, '').split('\0') });
  }
  return out;
}

export function readEnviron(pid: number): Record<string, string> | undefined {
  const raw = readText(path.join(PROC, String(pid), 'environ'));
  if (raw === undefined) return undefined;
  const env: Record<string, string> = {};
  for (const pair of raw.split('\0')) {
    const eq = pair.indexOf('=');
    if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

/** Targets of a process's open file descriptors (unreadable for other users' processes unless root). */
export function openFiles(pid: number): string[] {
  const dir = path.join(PROC, String(pid), 'fd');
  let fds: string[];
  try {
    fds = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const fd of fds) {
    try {
      out.push(fs.readlinkSync(path.join(dir, fd)));
    } catch {
      /* fd closed meanwhile */
    }
  }
  return out;
}

/** For each path, the pids that hold it open (compared by real path). */
export function holders(paths: string[]): Map<string, number[]> {
  const wanted = new Map<string, string>();
  for (const p of paths) wanted.set(realOr(p), p);
  const result = new Map<string, number[]>(paths.map((p) => [p, []]));
  for (const proc of listProcesses()) {
    for (const target of openFiles(proc.pid)) {
      const original = wanted.get(target.replace(/ \(deleted\)$/, ''));
      if (original !== undefined) {
        const list = result.get(original)!;
        if (!list.includes(proc.pid)) list.push(proc.pid);
      }
    }
  }
  return result;
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Names a server process can have: the real builds, and our simulator. */
const SERVER_ARGV = /(^|\/)(agy_acp_server(\.par)?|antigravity-acp|agy-acp-sim(\.mjs)?)$|\/dist\/sim\/main\.js$/;

export function looksLikeServer(argv: string[]): boolean {
  return argv.slice(0, 3).some((a) => SERVER_ARGV.test(a));
}

/**
 * Servers of this user whose state dir is `stateDir`: the server derives it
 * from HOME, so compare `$HOME/.gemini/antigravity-acp` from its environment;
 * a server holding a file under the state dir open also counts.
 */
export function findServersFor(stateDir: string, uid = process.getuid?.() ?? -1): ProcInfo[] {
  const target = realOr(stateDir);
  return listProcesses().filter((p) => {
    if (p.uid !== uid || !looksLikeServer(p.argv)) return false;
    const home = readEnviron(p.pid)?.HOME;
    if (home && realOr(path.join(home, STATE_SUBDIR)) === target) return true;
    return openFiles(p.pid).some((f) => f.startsWith(target + path.sep));
  });
}

/**
 * Whether some process holds a write lock (fcntl or OFD) on any byte of
 * `first..last` of `file`, from /proc/locks (every process's locks, readable
 * by anyone; the device is printed as hex major:minor). False when the file
 * or /proc/locks cannot be read.
 */
export function writeLocked(file: string, first: number, last: number): boolean {
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(file, { bigint: true });
  } catch {
    return false;
  }
  const major = ((st.dev >> 8n) & 0xfffn) | ((st.dev >> 32n) & ~0xfffn);
  const minor = (st.dev & 0xffn) | ((st.dev >> 12n) & ~0xffn);
  const id = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${st.ino}`;
  for (const line of (readText(path.join(PROC, 'locks')) ?? '').split('\n')) {
    // "1: POSIX  ADVISORY  WRITE 1234 08:01:1835022 1073741826 1073742335"; waiters ("1: -> ...") hold nothing.
    const f = line.trim().split(/\s+/);
    if (f[1] === '->' || f[3] !== 'WRITE' || f[5] !== id) continue;
    const start = Number(f[6]);
    const end = f[7] === 'EOF' ? Number.POSITIVE_INFINITY : Number(f[7]);
    if (start <= last && end >= first) return true;
  }
  return false;
}
