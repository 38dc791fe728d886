/**
 * Pasted redirects arrive on stdin: from a prompt on a TTY (with the
 * countdown in the prompt, redrawn without losing what the user typed), or
 * one per line from a pipe. EOF just ends pasting; it does not end the login.
 */
import readline from 'node:readline';
import type { CommandIO } from '../core/io.js';
import { formatDuration } from '../util/duration.js';

export interface PasteReader {
  /** Redraw the prompt (TTY only), keeping the user's partial input; nothing while held. */
  refresh(): void;
  /** Draw the prompt again after a line that held it (a paste that was not delivered after all). */
  resume(): void;
  /** Stop drawing the prompt until `resume` (an answer is being delivered some other way). */
  hold(): void;
  close(): void;
}

/**
 * The prompt is drawn (and redrawn) only when both ends are a terminal: with
 * stdin a TTY but stderr piped (`login 2>&1 | tee`), redraws would put
 * cursor codes into the pipe every second.
 */
export function promptsOnTty(io: CommandIO): boolean {
  return Boolean(io.ctx.stdin.isTTY) && Boolean(io.ctx.stderr.isTTY);
}

/** The one countdown prompt: `[4m59s left] <text>> `, in whole seconds (rounded up, so it never shows 0s while time is left). */
/** What a paste prompt asks for: the code a code-entry page shows, else the address the browser ended on. */
export const pasteWhat = (codeEntry: boolean): string =>
  codeEntry ? 'paste the authorization code' : 'paste the address your browser ended on';

export function countdownPrompt(text: string, deadline: number | undefined, now = Date.now()): string {
  if (deadline === undefined) return `${text}> `;
  const left = Math.ceil(Math.max(0, deadline - now) / 1000) * 1000;
  return `[${left === 0 ? '0s' : formatDuration(left)} left] ${text}> `;
}

/** What the prompt asks; with a deadline it counts down (`countdownPrompt`), redrawn every second. */
export interface PastePrompt {
  text(): string;
  deadline?(): number | undefined;
}

const COUNTDOWN_EVERY_MS = 1_000;

/**
 * With no prompt, lines are only read (the terminal echoes them as typed).
 * `onLine` returning false holds the prompt: it is not drawn again (nor
 * counted down) until `resume`, so a paste being delivered is not followed
 * by a fresh prompt asking for it again.
 */
export function startPasteReader(
  io: CommandIO,
  prompt: PastePrompt | undefined,
  // biome-ignore lint/suspicious/noConfusingVoidType: most readers return nothing; only `false` holds the prompt
  onLine: (line: string) => boolean | void,
  /** stdin ended (EOF, e.g. </dev/null): no paste can ever come. Not called for close(). */
  onEnd?: () => void,
): PasteReader {
  const { stdin, stderr } = io.ctx;
  const tty = prompt !== undefined && promptsOnTty(io);
  // Readline's line editor moves the cursor with escape sequences; without them (NO_COLOR, TERM=dumb,
  // --no-color) the terminal's own line editing reads the line, and the prompt is a status line.
  const editor = tty && io.out.stderrEscapes;
  const promptText = (): string => (prompt ? countdownPrompt(prompt.text(), prompt.deadline?.()) : '');
  const rl = readline.createInterface({
    input: stdin,
    ...(editor ? { output: stderr, terminal: true } : { terminal: false }),
  });
  const draw = (keepInput: boolean): void => {
    if (!editor) {
      io.out.status(promptText());
      return;
    }
    rl.setPrompt(promptText());
    rl.prompt(keepInput);
  };
  if (editor)
    // In raw mode Ctrl-C reaches readline, not the process: pass it on as the real signal.
    rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  if (tty) draw(false);
  let held = false;
  rl.on('line', (line) => {
    held = onLine(line) === false;
    // The terminal has moved to a new line: the plain prompt starts afresh there.
    if (tty && !editor) io.out.clearStatus();
    if (tty && !held) draw(false);
  });
  rl.on('error', () => undefined);
  let closing = false;
  rl.on('close', () => {
    if (!closing) onEnd?.();
  });
  const refresh = (): void => {
    if (!tty || held) return;
    draw(true);
  };
  // Without the line editor a redraw would cover what is being typed: the countdown is shown at each draw only.
  const countdown = editor && prompt?.deadline ? setInterval(refresh, COUNTDOWN_EVERY_MS) : undefined;
  return {
    refresh,
    resume() {
      held = false;
      refresh();
    },
    hold() {
      held = true;
    },
    close() {
      closing = true;
      clearInterval(countdown);
      rl.close();
      if (editor) stderr.write('\n');
      else if (tty) io.out.clearStatus();
    },
  };
}
