/**
 * Pasted redirects arrive on stdin: from a prompt on a TTY (with the
 * countdown in the prompt, redrawn without losing what the user typed), or
 * one per line from a pipe. EOF just ends pasting; it does not end the login.
 */
import readline from 'node:readline';
import type { CommandIO } from '../core/io.js';

export interface PasteReader {
  /** Redraw the prompt (TTY only), keeping the user's partial input. */
  refresh(): void;
  close(): void;
}

export function startPasteReader(io: CommandIO, prompt: () => string, onLine: (line: string) => void): PasteReader {
  const { stdin, stderr } = io.ctx;
  const tty = Boolean(stdin.isTTY);
  const rl = readline.createInterface({
    input: stdin,
    ...(tty ? { output: stderr, terminal: true } : { terminal: false }),
  });
  if (tty) {
    // In raw mode Ctrl-C reaches readline, not the process: pass it on as the real signal.
    rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    rl.setPrompt(prompt());
    rl.prompt();
  }
  rl.on('line', (line) => {
    onLine(line);
    if (tty) {
      rl.setPrompt(prompt());
      rl.prompt();
    }
  });
  rl.on('error', () => undefined);
  return {
    refresh() {
      if (!tty) return;
      rl.setPrompt(prompt());
      rl.prompt(true);
    },
    close() {
      rl.close();
      if (tty) stderr.write('\n');
    },
  };
}
