/**
 * The Examples and Exit codes sections of every `--help`, in one place,
 * keyed by command path ('' is the program itself). buildProgram appends
 * them with commander's addHelpText('after'), so command files stay about
 * flags. Plain data, loaded only when help is about to be shown (main.ts's
 * wantsHelp), so other runs start without it.
 */
import type { Command } from 'commander';
import { wrapProse } from './terminal/wrap.js';

interface HelpExtra {
  /** [invocation, what it does]: real command lines a user can paste (shown gh-style: comment, then `$ command`). */
  examples: ReadonlyArray<readonly [string, string]>;
  /** [exit code, when] (`agyctl help exit-codes` gives the general meaning). */
  exits: ReadonlyArray<readonly [number, string]>;
}

const USAGE: readonly [number, string] = [2, 'bad flags or input'];
const SERVER: readonly [number, string] = [
  4,
  'the server was not found, failed to start, exited or broke the protocol',
];
const TIMEOUT: readonly [number, string] = [5, '--timeout passed'];
const INTERRUPTED: readonly [number, string] = [130, 'Ctrl-C (every child process is stopped)'];

export const HELP: Readonly<Record<string, HelpExtra>> = {
  '': {
    examples: [
      ['agyctl check', 'is the server configured and signed in?'],
      [
        'agyctl check --live --timeout 2min',
        'durations as systemd spells them: 500ms, 90s, 2min, 1h 30min, 1d (a unit is required; at most 24d)',
      ],
      ['agyctl login --ssh-target box.example.com', 'sign a headless box in over SSH'],
      ['source <(agyctl completion bash)', 'tab completion for this shell'],
    ],
    exits: [
      [0, 'ok'],
      [1, 'a bug in agyctl'],
      USAGE,
      [3, 'authentication'],
      SERVER,
      TIMEOUT,
      [6, 'findings'],
      INTERRUPTED,
    ],
  },
  probe: {
    examples: [
      ['agyctl probe', "the server's build, auth methods and start-up time"],
      ['agyctl probe --server "/opt/agy/agy_acp_server --debug" --json', 'a server off the PATH, as JSON'],
      ['agyctl probe --sign-in', 'how this server build offers sign-in, without signing in'],
      [
        'agyctl probe --assumptions --json',
        "which of agyctl's facts about the server hold on this box (docs/assumptions.md)",
      ],
    ],
    exits: [[0, 'the server answered initialize'], USAGE, SERVER, TIMEOUT, INTERRUPTED],
  },
  check: {
    examples: [
      ['agyctl check', 'settings, token and server command, without starting the server'],
      ['agyctl check --live --restart --json', 'also open a session and load it in a fresh server'],
      ['agyctl check --prometheus /var/lib/node_exporter/agyctl.prom', 'also write metrics for node_exporter'],
    ],
    exits: [
      [0, 'every check passed'],
      [2, 'bad flags, or a --state-dir that does not exist or is not a directory'],
      [3, 'not signed in, or the sign-in must be redone'],
      SERVER,
      TIMEOUT,
      [6, 'a finding (token mode, invalid settings)'],
      INTERRUPTED,
    ],
  },
  settings: {
    examples: [
      ['agyctl settings', 'what settings.json says and what is missing'],
      ['agyctl settings set-auth gemini-api-key', 'choose how the server authenticates'],
      ['agyctl settings validate', 'exit 2 with every problem listed'],
    ],
    exits: [
      [0, 'ok'],
      [2, 'bad flags, or a settings.json agyctl cannot use'],
    ],
  },
  'settings show': {
    examples: [
      ['agyctl settings show', 'path, mode, auth type, needed variables, running servers, problems'],
      ['agyctl settings show --json | jq .problems', 'the problems, for a script'],
    ],
    exits: [
      [0, 'shown (problems included)'],
      [2, 'bad flags'],
    ],
  },
  'settings set-auth': {
    examples: [
      ['agyctl settings set-auth oauth-personal', 'sign in with a Google account (then: agyctl login)'],
      ['agyctl settings set-auth oauth-business --project my-proj --location us-central1', 'Gemini Enterprise'],
      ['agyctl settings set-auth agent-platform --force', 'move an unparsable file aside and write a fresh one'],
    ],
    exits: [
      [0, 'written, or already so'],
      [2, 'bad type or value, or a file agyctl will not overwrite without --force'],
    ],
  },
  'settings validate': {
    examples: [
      ['agyctl settings validate', 'list every problem'],
      ['agyctl settings validate --json', 'the same, as JSON'],
    ],
    exits: [
      [0, 'usable as is'],
      [2, 'at least one error (all are listed)'],
    ],
  },
  login: {
    examples: [
      ['agyctl login', 'print the sign-in URL and the SSH tunnel command, wait, prove the token'],
      [
        'agyctl login --ssh-target me@box.example.com:2222 --qr',
        'a tunnel command for your laptop, and a QR code (on a terminal of at least about 83×60)',
      ],
      [
        'agyctl login --detach --json',
        'start the login in the background and return at once (finish it with `login finish`)',
      ],
    ],
    exits: [
      [0, 'signed in and proven in a fresh server (or detached; SIGHUP also leaves the login running)'],
      [
        2,
        'bad flags, a login is already pending (--restart replaces it), a method agyctl cannot complete, or a server agyctl does not sign in (another vendor)',
      ],
      [3, 'the sign-in or the proof failed'],
      [4, 'the server exited, its listener disappeared, or it broke the protocol'],
      TIMEOUT,
      [130, 'Ctrl-C or SIGTERM (the login is cancelled)'],
    ],
  },
  'login status': {
    examples: [
      ['agyctl login status', 'is a login pending? its URL, tunnel command and time left, or how it ended'],
      ['agyctl login status --wait --json', "block until the pending login ends and exit with the login's own code"],
    ],
    exits: [
      [0, 'shown (with --wait: the login succeeded)'],
      [2, 'bad flags'],
      [4, 'the supervisor cannot be reached'],
      [130, 'Ctrl-C while waiting'],
    ],
  },
  'login finish': {
    examples: [
      ['agyctl login finish "http://127.0.0.1:35293/?state=...&code=..."', 'deliver the address your browser ended on'],
      ['agyctl login finish < redirect.txt', 'the same, from stdin (a file, or a pipe from your clipboard tool)'],
    ],
    exits: [
      [0, 'delivered (see `login status --wait` for the outcome)'],
      [2, 'no pending login, the address does not match it, or the login shows a page with nothing to paste'],
      [4, 'the supervisor cannot be reached'],
    ],
  },
  'login cancel': {
    examples: [['agyctl login cancel', 'stop the pending login: server, listener and shim dir gone']],
    exits: [
      [0, 'cancelled, or nothing was pending'],
      [2, 'bad flags'],
      [4, 'the supervisor cannot be reached'],
    ],
  },
  logout: {
    examples: [
      ['agyctl logout', "the server's own logout, then a fresh server must refuse"],
      ['agyctl logout --local', 'remove the token file without asking the server'],
    ],
    exits: [
      [0, 'logged out and refused by a fresh server'],
      USAGE,
      SERVER,
      TIMEOUT,
      [6, 'credentials still work (e.g. an API key in the environment)'],
      INTERRUPTED,
    ],
  },
  sessions: {
    examples: [
      ['agyctl sessions', 'id, cwd, size, last change and which process has each conversation open'],
      ['agyctl sessions --json | jq -r ".sessions[].id"', 'just the ids'],
    ],
    exits: [
      [0, 'listed (also none yet: a state dir without conversations/)'],
      [2, 'the state dir does not exist or is not a directory (a wrong --state-dir)'],
    ],
  },
  'sessions export': {
    examples: [
      [
        'agyctl sessions export --out ~/transcripts',
        'every live session as <id>.md (replayed from a consistent copy; the directory is created, 0700)',
      ],
      [
        'agyctl sessions export latest --format jsonl --out -',
        'the newest snapshot, one JSON line per message, on stdout',
      ],
    ],
    exits: [
      [0, 'every session written'],
      [2, 'bad option, unknown --session, an output file that exists, not a snapshot'],
      SERVER,
      [5, '--load-timeout passed'],
      [6, 'a session could not be copied, restored for the replay or loaded'],
      INTERRUPTED,
      [141, 'the reader of --out - went away (`| head`): stopped quietly'],
    ],
  },
  backup: {
    examples: [
      ['agyctl backup', 'snapshot every conversation into ~/.local/state/agyctl/backups/<UTC time>/'],
      ['agyctl backup --to /srv/agy-backups --keep-daily 7 --keep-weekly 4', 'with retention'],
      ['agyctl backup verify latest', 're-hash and integrity-check the newest snapshot'],
      [
        'agyctl backup --keep-last 3 --dry-run',
        'what would be written and what retention would remove, changing nothing',
      ],
    ],
    exits: [
      [0, 'every conversation backed up'],
      [2, 'bad option, unknown --session, a state dir that is missing or not a directory, lock held'],
      [6, 'a session failed or the destination was full'],
      INTERRUPTED,
    ],
  },
  server: {
    examples: [
      [
        'agyctl server install agy-1.3.0-linux-x86_64.zip --sha256 HEX',
        'install, switch to and prove a published build',
      ],
      ['agyctl server list', 'the installed versions; * marks the current one'],
    ],
    exits: [[0, 'ok'], USAGE, INTERRUPTED],
  },
  'server install': {
    examples: [
      [
        'agyctl server install agy-1.3.0-linux-x86_64.zip --sha256 HEX',
        'verify, unpack, switch, prove (initialize; check --live when signed in)',
      ],
      [
        'agyctl server install build.zip --sums SHA256SUMS --version 1.3.0 --no-prove',
        'the sum from a sums file; no proof',
      ],
      [
        'sudo agyctl server install build.zip --sha256 HEX --state-dir /home/agy/.gemini/antigravity-acp',
        "root: into /opt/agyctl/servers, proven with that user's credentials",
      ],
    ],
    exits: [
      [0, 'installed, switched and proven'],
      [2, 'preflight refused, no version, no sum, a pending login (--force), or the version is installed'],
      [3, 'the new build rejected the credentials: the previous version is back'],
      [4, 'the new build did not start: the previous version is back'],
      [6, 'wrong sha256, or a damaged, hostile or too large archive: nothing changed'],
      INTERRUPTED,
    ],
  },
  'server list': {
    examples: [['agyctl server list --json', 'versions, current, sha256, bytes, installedAt, path']],
    exits: [[0, 'listed (also none)'], USAGE],
  },
  'server use': {
    examples: [['agyctl server use 1.2.1', 'switch back to an installed version and prove it']],
    exits: [
      [0, 'switched and proven'],
      USAGE,
      [3, 'credentials rejected: switched back'],
      [4, 'did not start: switched back'],
      INTERRUPTED,
    ],
  },
  'server remove': {
    examples: [['agyctl server remove 1.2.1', 'remove a version that is not current']],
    exits: [
      [0, 'removed'],
      [2, 'not installed, or the current version'],
    ],
  },
  'server prune': {
    examples: [['agyctl server prune --keep 2', 'keep the current version and the newest other one']],
    exits: [[0, 'pruned'], USAGE],
  },
  'server status': {
    examples: [['agyctl server status', "the installed version beside the server's agentInfo.version"]],
    exits: [
      [0, 'the server names no other version'],
      USAGE,
      SERVER,
      TIMEOUT,
      [6, 'the server names another version number'],
      INTERRUPTED,
    ],
  },
  'backup list': {
    examples: [
      ['agyctl backup list', 'the snapshots in the default directory, newest first: sessions, size, failures, proven'],
      ['agyctl backup list --from /srv/agy-backups --json', 'another directory, as JSON'],
    ],
    exits: [
      [0, 'listed (also none, or no backup directory yet)'],
      [2, 'bad flags, or a backup directory that cannot be read'],
    ],
  },
  'backup verify': {
    examples: [
      ['agyctl backup verify latest', 'the newest snapshot in the default directory'],
      [
        'agyctl backup verify 2026-12-01T21-29-54.253Z --from /srv/agy-backups --json',
        'one snapshot elsewhere, as JSON',
      ],
      [
        'agyctl backup verify latest --prove',
        'a fresh server loads every session from a scratch copy; its replay is recorded',
      ],
    ],
    exits: [
      [0, 'every file matches its manifest'],
      [2, 'bad option, or not a snapshot'],
      [6, 'a mismatch, a damaged replay.json, or (--prove) a session that did not load or replayed another history'],
      INTERRUPTED,
    ],
  },
  restore: {
    examples: [
      ['agyctl restore latest', 'every conversation of the newest snapshot (stop the server first)'],
      ['agyctl restore 2026-12-01T21-29-54.253Z --session 3f2a9c1e-0000-4000-8000-000000000000', 'one conversation'],
    ],
    exits: [
      [0, 'restored'],
      [2, 'bad option, or not a snapshot'],
      [6, 'refused (a process has a conversation open) or a damaged snapshot'],
      INTERRUPTED,
    ],
  },
  connect: {
    examples: [
      ['agyctl connect me@box.example.com', 'sign the remote server in from your laptop in one step'],
      ['agyctl connect box --ssh-option "ProxyJump=bastion" --no-open', 'through a jump host, printing the URL'],
      [
        'agyctl connect --inventory hosts.ini --limit build',
        'every host of an Ansible group in one sitting; healthy hosts are skipped',
      ],
    ],
    exits: [
      [0, 'the remote login succeeded'],
      USAGE,
      [3, 'the remote sign-in failed'],
      [4, 'SSH failed, agyctl missing on the box, or a server problem there'],
      [5, 'SSH or the sign-in took too long'],
      INTERRUPTED,
    ],
  },
  completion: {
    examples: [
      ['source <(agyctl completion bash)', 'bash, this shell; add the line to ~/.bashrc to keep it'],
      [
        'mkdir -p ~/.zfunc && agyctl completion zsh > ~/.zfunc/_agyctl',
        'zsh: a native completion function; put fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc',
      ],
      ['source <(agyctl completion zsh)', 'zsh, this shell (after compinit)'],
      [
        'mkdir -p ~/.config/fish/completions && agyctl completion fish > ~/.config/fish/completions/agyctl.fish',
        'fish',
      ],
    ],
    exits: [
      [0, 'printed'],
      [2, 'an unknown shell'],
    ],
  },
  version: {
    examples: [
      ['agyctl version', 'for a bug report: agyctl, Node.js and SQLite versions, and the binding loaded'],
      ['agyctl version --json', "a health check: loads and queries the SQLite binding (the Ansible role's)"],
    ],
    exits: [
      [0, 'the SQLite binding loaded and answered'],
      [1, 'the SQLite binding cannot be loaded; the hint names the fix'],
    ],
  },
};

/** A comment broken at spaces to the width, every line of it a `#` line (a command is left whole, to copy). */
const comment = (what: string, width: number): string =>
  wrapProse(what, width - 4)
    .split('\n')
    .map((line) => `  # ${line}`)
    .join('\n');

export function renderHelpExtra(extra: HelpExtra, width = 80): string {
  const examples = extra.examples.map(([cmd, what]) => `${comment(what, width)}\n  $ ${cmd}`);
  const exits = extra.exits.map(([code, when]) => `  ${String(code).padStart(3)}  ${when}`);
  return `\nExamples:\n${examples.join('\n')}\n\nExit codes (all of them: agyctl help exit-codes):\n${exits.join('\n')}\n`;
}

/** The command's path below the program: 'settings set-auth'; '' for the program. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Append the sections to every command of the tree that has them. */
export function addHelpExtras(cmd: Command, width = 80): void {
  const extra = HELP[commandPath(cmd)];
  if (extra) cmd.addHelpText('after', () => renderHelpExtra(extra, width));
  // `A help B` works under every command with subcommands (help-request.ts); commander lists it only under those
  // without an action of their own (backup, login and sessions have one).
  if (cmd.commands.length > 0) cmd.helpCommand(true);
  for (const sub of cmd.commands) addHelpExtras(sub, width);
}
