/** Which server to run: --server / AGYCTL_SERVER split like a shell splits words, else the known names on PATH. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'shell-quote';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import { firstClosedDir } from '../util/os/tree-owner.js';

export interface ServerCommand {
  file: string;
  args: string[];
  /** How the user would write it, for messages. */
  display: string;
}

/** Where to look without --server, and what to tell a user who has none: a profile's (src/profiles/server-start.ts). */
export interface ServerDefaults {
  defaultCommands: ReadonlyArray<{ name: string; args: readonly string[] }>;
  installHint: string;
}

function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Shell-like word splitting: quotes and $VARS work; pipes, redirections and globs are refused. */
export function splitCommandLine(line: string, env: NodeJS.ProcessEnv): string[] {
  const open = unterminatedQuote(line);
  // shell-quote drops a quote that is never closed; a shell would wait for more input, so refuse it.
  if (open)
    throw usageError(
      `--server has an unterminated ${open} quote (${JSON.stringify(line)}).`,
      `close the quote, e.g. --server '"/opt/my dir/agy_acp_server" --debug'`,
    );
  const words = parse(line, (name) => env[name] ?? '');
  return words.map((w) => {
    if (typeof w === 'string') return w;
    throw usageError(
      `--server must be a plain command line, not shell syntax (${JSON.stringify(line)}).`,
      'wrap pipelines or redirections in a script and pass its path to --server',
    );
  });
}

/** The quote character a command line leaves open (as sh reads it: \\ escapes outside single quotes), else undefined. */
function unterminatedQuote(line: string): string | undefined {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') i += 1;
    else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
  }
  return quote;
}

const notFound = (what: string, profile: ServerDefaults): AgyError =>
  new AgyError(EXIT.server, 'server-not-found', `${what}`, { hint: profile.installHint });

/**
 * The server command is fine but a directory on its way is closed to this
 * user (root's 0700 /root, seen by the state dir owner's agyctl): that
 * directory is the problem, named with its owner and mode.
 */
export function closedDirError(command: string, dir: string): AgyError {
  const st = fs.statSync(dir, { throwIfNoEntry: false });
  const how = st ? ` (owner uid ${st.uid}, mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')})` : '';
  return new AgyError(
    EXIT.usage,
    'server-dir-closed',
    `The server command ${command} cannot be reached by ${userName()}: ${dir}${how} is closed to it.`,
    {
      hint: `put the server where ${userName()} can run it (not under ${dir}), or open ${dir} to it (chmod o+x ${dir})`,
      details: { path: dir },
    },
  );
}

const userName = (): string => {
  try {
    return os.userInfo().username;
  } catch {
    return `uid ${process.getuid?.()}`;
  }
};

/** No --server: the profile's known program names on PATH (gemini-cli: `gemini --acp`). */
export function resolveCommand(
  commandLine: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
  profile: ServerDefaults,
): ServerCommand {
  if (commandLine === undefined || commandLine.trim() === '') {
    for (const { name, args } of profile.defaultCommands) {
      const file = findOnPath(name, env);
      if (file) return { file, args: [...args], display: [file, ...args].join(' ') };
    }
    throw notFound(
      `No ACP server found on PATH (looked for ${profile.defaultCommands.map((c) => c.name).join(', ')}).`,
      profile,
    );
  }
  const [first, ...args] = splitCommandLine(commandLine, env);
  if (!first) throw usageError('--server is empty.', 'pass the server command, e.g. --server /opt/agy/agy_acp_server');
  const file = first.includes('/') ? path.resolve(cwd, first) : findOnPath(first, env);
  if (file && !isExecutable(file)) {
    const closed = firstClosedDir(path.dirname(file));
    if (closed) throw closedDirError(first, closed);
  }
  if (!file || !isExecutable(file)) throw notFound(`Server command not found or not executable: ${first}`, profile);
  return { file, args, display: commandLine };
}
