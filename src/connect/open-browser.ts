/**
 * Open the sign-in URL in the laptop's browser with the `open` package (on
 * Linux its bundled xdg-open, which honours BROWSER). A launcher that fails
 * fails fast; one still running after a moment is taken as a success (a
 * browser started in the foreground may run for hours).
 */
const FAIL_FAST_MS = 1_500;

export type BrowserResult = { ok: true } | { ok: false; reason: string };

export async function openBrowser(url: string): Promise<BrowserResult> {
  try {
    const { default: open } = await import('open');
    const child = await open(url, { wait: false });
    const code = child.exitCode ?? (await exitWithin(child, FAIL_FAST_MS));
    if (code === null || code === 0) return { ok: true };
    return { ok: false, reason: `the browser launcher exited with code ${code}` };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

function exitWithin(child: import('node:child_process').ChildProcess, ms: number): Promise<number | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
