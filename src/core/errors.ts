/**
 * The one exit-code table. Exit codes are API: scripts and CI branch on them,
 * so every code agyctl can return is listed here, rendered into
 * docs/exit-codes.md by scripts/render-exit-codes.mjs, and a test keeps the
 * two in agreement.
 */
export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  auth: 3,
  server: 4,
  timeout: 5,
  findings: 6,
  interrupted: 130,
  readerGone: 141,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

const KNOWN_EXITS: ReadonlySet<number> = new Set<number>(Object.values(EXIT));

/** An exit code another process reported (a remote agyctl, a login's record): a documented one, else `fallback`. */
export function asExitCode(value: unknown, fallback: ExitCode = EXIT.server): ExitCode {
  return typeof value === 'number' && KNOWN_EXITS.has(value) ? (value as ExitCode) : fallback;
}

export const EXIT_TABLE: ReadonlyArray<{ exit: ExitCode; name: keyof typeof EXIT; meaning: string }> = [
  {
    exit: 0,
    name: 'ok',
    meaning: 'Success. `--help`, `--version` and a bare `agyctl` (the usage, on stdout) also exit 0.',
  },
  {
    exit: 1,
    name: 'internal',
    meaning:
      'Internal error: a bug in agyctl. Please report it with `--trace`. Also when the SQLite binding cannot be loaded (`sqlite-binding`: a binding built for another Node, or an executable that cannot write it out); the hint names the fix, and `agyctl version` shows it.',
  },
  {
    exit: 2,
    name: 'usage',
    meaning:
      'Usage error or invalid input (bad flag, malformed settings file, lock held by another run, a path that cannot be used: not a directory, permission denied, read-only, name too long, a symbolic link where agyctl writes, a `--trace` or `--prometheus` file of another user; a state dir the server cannot be pointed at; an empty HOME, --server or --state-dir; a HOME that does not exist or is not a directory; for check, sessions and backup, a --state-dir or AGYCTL_STATE_DIR that does not exist or is not a directory; a sign-in method agyctl cannot complete, or a server agyctl does not sign in; for `server`: a preflight refusal (`server install` on another architecture or without glibc, an unusable --prefix), no version (`--version`), no sum (`--sha256`/`--sums`), a version already installed, removing the current version (`server-version-current`), a `login --detach` pending without --force (`server-login-pending`), another `server` command at work (`server-busy`)).',
  },
  {
    exit: 3,
    name: 'auth',
    meaning:
      'Not authenticated, or authentication failed or must be redone (also a `server install`/`server use` whose new build rejected the stored credentials in `check --live`: `server-proof-failed`, the previous version switched back).',
  },
  {
    exit: 4,
    name: 'server',
    meaning:
      'The ACP server was not found, failed to start, exited, or broke the protocol (also SSH failures in `connect`, a login whose supervisor died, and a `server install`/`server use` whose new build did not start: `server-proof-failed`, the previous version switched back).',
  },
  {
    exit: 5,
    name: 'timeout',
    meaning:
      "A deadline passed (`--timeout`). As root on another user's state dir, also root's deadline on the work done as that user (`owner-timeout`): the command's `--timeout` plus 150 s for `check`, `login`, `logout` and `probe`; `--timeout` itself for `backup`, `restore`, `settings` and `sessions`.",
  },
  {
    exit: 6,
    name: 'findings',
    meaning:
      'A check or verification found problems: bad token mode, invalid settings with auth otherwise fine, a backup session that failed (including a full destination or disk), failed snapshot verification or a damaged snapshot, a refused restore, credentials still valid after logout; a server archive whose sha256 is not the one given (`server-archive-sha256-mismatch`), that is damaged or hostile (`server-archive-refused`: entries leaving its directory, links out, device files, setuid/setgid) or unpacks to more than the free space (`server-archive-too-large`), nothing changed; `server status` when the server reports another version number than the installed one; a full disk (or quota) under any other file agyctl writes (`--trace`, `--prometheus`, `sessions export --out`, `server --prefix`), leaving no partial file (a `--trace` log keeps what was written before).',
  },
  {
    exit: 130,
    name: 'interrupted',
    meaning:
      'Interrupted by Ctrl-C (SIGINT), SIGTERM or SIGHUP; every child process was stopped. A second signal stops everything at once (still 130). A login cancelled with `agyctl login cancel` also ends with 130. SIGHUP during `agyctl login` is not an interruption: the login goes on under its supervisor (docs/login.md).',
  },
  {
    exit: 141,
    name: 'readerGone',
    meaning:
      'The reader of stdout went away (`agyctl sessions export --out - | head`): the command stopped quietly, as `git log | head` does (128 + SIGPIPE), stopping every child process and leaving no temporary file. Nothing is printed. Not for `backup --archive -`: a consumer that dies mid-archive is a failed backup (exit 6, `archive-write-failed`); and a `login` whose reader goes away (its ssh session dropped) goes on under its supervisor, as on SIGHUP.',
  },
];

/**
 * Error codes that meant the same as another: old name -> the one code for
 * that meaning. `error.code` carries the new name; for one schema version
 * `error.deprecatedCode` still carries the old one (docs/json.md, "Renamed
 * codes"), then the old names go from here and from the throw sites.
 */
export const DEPRECATED_ERROR_CODES: Readonly<Record<string, string>> = {
  'no-login': 'no-pending-login',
  'login-record-unsafe': 'login-record-unusable',
};

export interface AgyErrorOptions {
  hint?: string;
  cause?: unknown;
  /** Extra machine-readable detail for `--json` output. */
  details?: Record<string, unknown>;
}

/**
 * An expected failure: something the user can act on. `code` is a stable,
 * kebab-case identifier for `--json` consumers; `hint` names the fix.
 * Anything thrown that is not an AgyError is a bug and exits 1.
 */
export class AgyError extends Error {
  readonly code: string;
  /** The old name of `code`, while it is kept as an alias (DEPRECATED_ERROR_CODES). */
  readonly deprecatedCode: string | undefined;
  readonly exit: ExitCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(exit: ExitCode, code: string, message: string, options: AgyErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgyError';
    this.exit = exit;
    const renamed = Object.hasOwn(DEPRECATED_ERROR_CODES, code) ? DEPRECATED_ERROR_CODES[code] : undefined;
    this.code = renamed ?? code;
    this.deprecatedCode = renamed === undefined ? undefined : code;
    this.hint = options.hint;
    this.details = options.details;
  }

  toJSON(): { code: string; deprecatedCode?: string; exit: number; message: string; hint?: string } {
    return {
      code: this.code,
      ...(this.deprecatedCode ? { deprecatedCode: this.deprecatedCode } : {}),
      exit: this.exit,
      message: this.message,
      ...(this.hint ? { hint: this.hint } : {}),
    };
  }
}

export const usageError = (message: string, hint?: string): AgyError =>
  new AgyError(EXIT.usage, 'usage', message, hint === undefined ? {} : { hint });

export class InterruptedError extends AgyError {
  /** `message`: what the interruption left, where a command can say (e.g. that nothing partial was left). */
  constructor(message = 'Interrupted.') {
    super(EXIT.interrupted, 'interrupted', message);
  }
}

export class TimeoutError extends AgyError {
  constructor(message: string, hint?: string) {
    super(EXIT.timeout, 'timeout', message, hint === undefined ? {} : { hint });
  }
}

/** Normalise anything thrown into an AgyError; unknown errors are bugs (exit 1). */
export function toAgyError(err: unknown): AgyError {
  if (err instanceof AgyError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new AgyError(EXIT.internal, 'internal', `Internal error: ${message}`, {
    hint: 'This is a bug in agyctl. Re-run with --trace FILE and --verbose and report it.',
    cause: err,
  });
}

/** The abort reason when stdout's reader went away (EPIPE): the run ends quietly with EXIT.readerGone. */
export class ReaderGone extends Error {
  constructor() {
    super('the reader of stdout went away');
    this.name = 'ReaderGone';
  }
}
