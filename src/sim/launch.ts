// How the OAuth URL reaches the user. RC01 on a headless box prints nothing
// and only tries a browser; newer builds print a line; gemini-cli only runs
// xdg-open and only with a display. AGY_SIM_LAUNCH picks one behaviour.
import { spawn } from 'node:child_process';
import type { LaunchMode } from './config.js';

export const URL_LINE_PREFIX = 'Open the following link to authenticate the ACP server: ';

type Env = Record<string, string | undefined>;

/** Fire and forget: never wait for the browser, never report its failure (RC01 doesn't). */
function spawnDetachedQuietly(command: string, url: string, env: Env): void {
  try {
    const child = spawn(command, [url], { detached: false, stdio: 'ignore', env: env as NodeJS.ProcessEnv });
    child.on('error', () => {});
    child.unref();
  } catch {
    // e.g. an empty or invalid command: same as a missing browser
  }
}

function openBrowser(url: string, env: Env, useBrowserVar: boolean): void {
  const browser = env.BROWSER;
  if (useBrowserVar && browser !== undefined && browser !== '') spawnDetachedQuietly(browser, url, env);
  else spawnDetachedQuietly('xdg-open', url, env);
}

export interface LaunchIo {
  /** Raw write onto the JSON-RPC channel (stdout). */
  writeStdoutLine(line: string): void;
  writeStderrLine(line: string): void;
}

export function deliverUrl(mode: LaunchMode, url: string, env: Env, io: LaunchIo): void {
  switch (mode) {
    case 'default':
      openBrowser(url, env, true);
      return;
    case 'xdg-only':
      openBrowser(url, env, false);
      return;
    case 'display-only':
      // Without a display the URL is simply lost, as on real headless boxes.
      if ((env.DISPLAY ?? '') !== '' || (env.WAYLAND_DISPLAY ?? '') !== '') openBrowser(url, env, true);
      return;
    case 'stdout':
      io.writeStdoutLine(URL_LINE_PREFIX + url);
      return;
    case 'stderr':
      io.writeStderrLine(URL_LINE_PREFIX + url);
      return;
    case 'none':
      return;
  }
}
