// AGY_SIM_LAUNCH modes that hand the launcher a local file leading to the URL
// (html-file, html-file-url, desktop-file, url-file): the file's
// place and modes, what it holds, and that it goes when the process ends,
// SIGTERM and SIGINT included (AGY_SIM_IGNORE_SIGTERM still ignores SIGTERM).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import { capturingScript, parseAuthUrl, Sim, sleep, tmp, useSimulator } from './helpers.js';

useSimulator();

/** A sim whose BROWSER records its arguments, with its own TMPDIR (where the page goes). */
function simWithBrowser(mode: string, extra: Record<string, string> = {}): { sim: Sim; log: string; tmpdir: string } {
  const bin = tmp('agy-sim-bin-');
  const log = join(bin, 'browser.log');
  const tmpdir = tmp('agy-sim-tmp-');
  const browser = capturingScript(bin, 'fake-browser', log);
  const sim = new Sim(tmp(), { BROWSER: browser, TMPDIR: tmpdir, AGY_SIM_LAUNCH: mode, ...extra });
  return { sim, log, tmpdir };
}

/** The one argument BROWSER got, once it ran. */
async function launched(log: string): Promise<string> {
  const line = await until('BROWSER ran', 5_000, () =>
    existsSync(log) ? readFileSync(log, 'utf8').trim() || undefined : undefined,
  );
  const [argc, arg] = line.split('|');
  expect(argc).toBe('1');
  return arg!;
}

const pagesLeft = (tmpdir: string): string[] => readdirSync(tmpdir).filter((f) => f.startsWith('agy-sim-page-'));

describe('AGY_SIM_LAUNCH file modes', () => {
  it.each([
    ['html-file', 'signin.html', false],
    ['html-file-url', 'signin.html', true],
    ['desktop-file', 'signin.desktop', false],
    ['url-file', 'signin.url', false],
  ])(
    '%s: BROWSER gets the %s page (0600 in a 0700 dir), which holds the URL; gone at stdin EOF',
    async (mode, name, asUrl) => {
      const { sim, log, tmpdir } = simWithBrowser(mode);
      sim.start('authenticate', { methodId: 'oauth-personal' });
      const arg = await launched(log);
      const file = asUrl ? fileURLToPath(arg) : arg;
      if (asUrl) expect(arg).toMatch(/^file:\/\/\//);
      expect(file.startsWith(`${tmpdir}/agy-sim-page-`)).toBe(true);
      expect(file.endsWith(`/${name}`)).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
      const text = readFileSync(file, 'utf8');
      const url = /(https:\/\/accounts\.google\.com\/[^"\s]+)/.exec(text.replace(/&amp;/g, '&'))![1]!;
      parseAuthUrl(url);
      expect(sim.stdout + sim.stderr).toBe('');
      expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
      expect(pagesLeft(tmpdir)).toEqual([]);
    },
  );

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: the page goes, and the process still ends by the signal',
    async (signal) => {
      const { sim, log, tmpdir } = simWithBrowser('html-file');
      sim.start('authenticate', { methodId: 'oauth-personal' });
      await launched(log);
      expect(pagesLeft(tmpdir)).toHaveLength(1);
      sim.kill(signal);
      expect(await sim.exited).toEqual({ code: null, signal });
      expect(pagesLeft(tmpdir)).toEqual([]);
    },
  );

  it('AGY_SIM_IGNORE_SIGTERM=1: SIGTERM is still ignored and the page stays; stdin EOF removes it', async () => {
    const { sim, log, tmpdir } = simWithBrowser('html-file', { AGY_SIM_IGNORE_SIGTERM: '1' });
    sim.start('authenticate', { methodId: 'oauth-personal' });
    await launched(log);
    sim.kill('SIGTERM');
    await sleep(300);
    expect(sim.exit).toBeUndefined();
    expect(pagesLeft(tmpdir)).toHaveLength(1);
    expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
    expect(pagesLeft(tmpdir)).toEqual([]);
  });
});
