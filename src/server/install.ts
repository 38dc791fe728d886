/**
 * `agyctl server install`: the archive as published, checked and unpacked
 * into its own versioned directory, `current` switched to it in one rename,
 * the new build proven, and the previous one put back when the proof fails.
 * Never patched, repacked or wrapped; no token is read (docs/server.md).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import type { CommandIO } from '../core/io.js';
import { showUntrusted } from '../core/safe-path.js';
import { currentVersion, type InstalledMeta, metaFile } from '../profiles/installed-server.js';
import { writeFileAtomic } from '../util/os/atomic-write.js';
import { listProcesses } from '../util/procfs.js';
import {
  type AgentJson,
  checkSha256,
  chooseCommand,
  chooseVersion,
  readAgentJson,
  sumFromFile,
} from './archive-facts.js';
import { glibcRuntime, type Preflight, preflight } from './preflight.js';
import { type ProofSetup, proofTarget } from './proof-target.js';
import { type ProofStep, proofFailure, prove } from './prove.js';
import { readRange } from './read-range.js';
import {
  ensureStore,
  lockStore,
  makeStaging,
  removeVersion,
  type Store,
  storeOf,
  sweepLeftovers,
  switchCurrent,
  versionDir,
} from './store.js';
import { unpackTarGz } from './targz.js';
import { freeBytes, refused, type UnpackOptions, UnpackTarget } from './unpack-target.js';
import { readZipDirectory, unpackedSize, unpackZip, type ZipEntry } from './zip.js';

export interface InstallInput extends ProofSetup {
  archive: string;
  sha256: string | undefined;
  sumsFile: string | undefined;
  version: string | undefined;
  agentJson: string | undefined;
  prefix: string;
  name: string;
  force: boolean;
}

export interface InstallReport {
  name: string;
  version: string;
  path: string;
  sha256: string;
  bytes: number;
  previous: string | null;
  preflight: Preflight;
  proof: ProofStep[] | null;
  swept: string[];
}

const SUPERVISOR_ARG = '__login-supervisor';

function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Refuses while a `login --detach` is pending on a server from this store
 * (a login supervisor's descendant runs a build from it): the switch must
 * not change a server under a sign-in; --force installs anyway.
 */
function assertNoPendingLogin(store: Store): void {
  const procs = listProcesses();
  const supervisors = new Set(procs.filter((p) => p.argv.includes(SUPERVISOR_ARG)).map((p) => p.pid));
  if (supervisors.size === 0) return;
  const underSupervisor = (pid: number): boolean => {
    let at: number | undefined = pid;
    for (let depth = 0; at !== undefined && depth < 16; depth += 1) {
      if (supervisors.has(at)) return true;
      at = parentOf(at);
    }
    return false;
  };
  const inside = `${store.dir}${path.sep}`;
  const server = procs.find((p) => p.argv.some((a) => a.startsWith(inside)) && underSupervisor(p.pid));
  if (!server) return;
  throw new AgyError(
    EXIT.usage,
    'server-login-pending',
    `A login is pending on a server installed here (pid ${server.pid}); installing now would switch its server under it.`,
    { hint: 'finish or cancel it (`agyctl login status`, `agyctl login cancel`), or pass --force' },
  );
}

function expectedSum(input: InstallInput): string {
  if (input.sha256 !== undefined && input.sumsFile !== undefined)
    throw usageError('--sha256 and --sums both give the sum.', 'pass one of them');
  if (input.sha256 !== undefined) return checkSha256(input.sha256);
  if (input.sumsFile === undefined)
    throw usageError("install needs the archive's published sha256.", 'pass --sha256 HEX or --sums SHA256SUMS');
  let text: string;
  try {
    text = fs.readFileSync(input.sumsFile, 'utf8');
  } catch (err) {
    throw usageError(
      `Cannot read --sums ${showUntrusted(input.sumsFile, 200)} (${(err as NodeJS.ErrnoException).code}).`,
      'pass the SHA256SUMS file published with the archive',
    );
  }
  return sumFromFile(text, input.archive);
}

function openArchive(file: string): { fd: number; size: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    throw usageError(
      `Cannot open the archive ${showUntrusted(file, 200)} (${(err as NodeJS.ErrnoException).code}).`,
      'pass the path of the archive file',
    );
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    fs.closeSync(fd);
    throw usageError(
      `The archive ${showUntrusted(file, 200)} is not a regular file.`,
      'pass the path of the archive file',
    );
  }
  return { fd, size: st.size };
}

/** The sha256 of everything the descriptor holds, streamed. */
async function hashFd(fd: number, signal: AbortSignal): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of readRange(fd, 0)) {
    if (signal.aborted) throw signal.reason;
    hash.update(chunk);
  }
  return hash.digest('hex');
}

type Format = 'zip' | 'tar.gz';

function formatOf(fd: number): Format {
  const magic = Buffer.alloc(4);
  fs.readSync(fd, magic, 0, 4, 0);
  if (magic.readUInt32LE(0) === 0x04034b50 || magic.readUInt32LE(0) === 0x06054b50) return 'zip';
  if (magic[0] === 0x1f && magic[1] === 0x8b) return 'tar.gz';
  throw refused('The archive is neither a zip nor a tar.gz.');
}

/** What is known before anything is written: a zip's entries, refused whole when they outrun the free space. */
function planUnpack(fd: number, size: number, dir: string): ZipEntry[] | undefined {
  if (formatOf(fd) !== 'zip') return undefined;
  const entries = readZipDirectory(fd, size);
  const needed = unpackedSize(entries);
  const free = freeBytes(dir);
  if (needed > free)
    throw new AgyError(
      EXIT.findings,
      'server-archive-too-large',
      `The archive unpacks to ${needed} bytes; ${dir} has ${free} free. Nothing was written.`,
      { hint: 'free space on that filesystem, or install under another --prefix' },
    );
  return entries;
}

async function unpackInto(
  staging: string,
  fd: number,
  size: number,
  zip: ZipEntry[] | undefined,
  opts: UnpackOptions,
): Promise<number> {
  const target = new UnpackTarget(staging, opts);
  if (zip) await unpackZip(fd, size, zip, target);
  else await unpackTarGz(fd, target);
  return target.bytes;
}

function assertCommandInside(dir: string, cmd: string, version: string): void {
  const file = path.resolve(dir, cmd);
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile())
    throw refused(
      `The archive of ${version} holds no ${showUntrusted(cmd)} (the server's command).`,
      'pass the archive as published, or --agent-json FILE naming its command',
    );
}

interface Prepared {
  store: Store;
  version: string;
  sha256: string;
  agent: AgentJson | undefined;
  preflight: Preflight;
  asRoot: boolean;
}

function prepare(input: InstallInput): Prepared {
  const agent = input.agentJson === undefined ? undefined : readAgentJson(input.agentJson);
  const version = chooseVersion(input.version, input.archive, agent);
  const sha256 = expectedSum(input);
  const checked = preflight({
    arch: process.arch,
    glibc: glibcRuntime(),
    agentListsPlatform: agent?.cmd !== undefined,
  });
  const asRoot = (process.getuid?.() ?? 0) === 0;
  const store = storeOf(input.prefix, input.name);
  ensureStore(store, asRoot);
  return { store, version, sha256, agent, preflight: checked, asRoot };
}

export async function installServer(io: CommandIO, input: InstallInput): Promise<InstallReport> {
  const p = prepare(input);
  const release = lockStore(p.store);
  try {
    const swept = sweepLeftovers(p.store);
    if (!input.force) assertNoPendingLogin(p.store);
    if (fs.existsSync(versionDir(p.store, p.version)))
      throw new AgyError(
        EXIT.usage,
        'server-version-installed',
        `Version ${p.version} is already installed under ${p.store.dir}.`,
        {
          hint: `switch to it with \`agyctl server use ${p.version}\`, or remove it first`,
        },
      );
    const { fd, size } = openArchive(input.archive);
    let bytes: number;
    try {
      const actual = await hashFd(fd, io.ctx.signal);
      if (actual !== p.sha256)
        throw new AgyError(
          EXIT.findings,
          'server-archive-sha256-mismatch',
          `The archive's sha256 is ${actual}, not ${p.sha256}; nothing was changed.`,
          {
            hint: "fetch the archive again, or check the sum against the publisher's",
          },
        );
      bytes = await unpackVersion(io, p, fd, size, input.archive);
    } finally {
      fs.closeSync(fd);
    }
    const previous = currentVersion(p.store.dir);
    switchCurrent(p.store, p.version);
    const proof = input.prove ? await proveOrRollBack(io, p, input, previous) : null;
    return {
      name: p.store.name,
      version: p.version,
      path: versionDir(p.store, p.version),
      sha256: p.sha256,
      bytes,
      previous: previous ?? null,
      preflight: p.preflight,
      proof,
      swept,
    };
  } finally {
    release();
  }
}

/** Staging, unpack, record, then the versioned directory appears whole (a rename). */
async function unpackVersion(io: CommandIO, p: Prepared, fd: number, size: number, archive: string): Promise<number> {
  const zip = planUnpack(fd, size, p.store.dir);
  const staging = makeStaging(p.store);
  try {
    const bytes = await unpackInto(staging, fd, size, zip, { dropGroupOtherWrite: p.asRoot, signal: io.ctx.signal });
    const command = chooseCommand(p.agent);
    assertCommandInside(staging, command.cmd, p.version);
    fs.chmodSync(staging, 0o755);
    const meta: InstalledMeta = {
      name: p.store.name,
      version: p.version,
      cmd: command.cmd,
      args: command.args,
      sha256: p.sha256,
      bytes,
      archive: path.basename(archive),
      installedAt: new Date().toISOString(),
    };
    writeFileAtomic(metaFile(p.store.dir, p.version), `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o644 });
    fs.renameSync(staging, versionDir(p.store, p.version));
    return bytes;
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

async function proveOrRollBack(
  io: CommandIO,
  p: Prepared,
  input: InstallInput,
  previous: string | undefined,
): Promise<ProofStep[]> {
  const steps = await prove(proofTarget(io, input, versionDir(p.store, p.version), p.store));
  const failed = steps.find((s) => s.exit !== EXIT.ok);
  if (!failed) return steps;
  switchCurrent(p.store, previous);
  removeVersion(p.store, p.version);
  throw proofFailure(failed, previous, p.version);
}
