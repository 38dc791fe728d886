/**
 * The real gemini-cli (the pinned dev dependency) as the server under test,
 * in a throwaway HOME with telemetry, usage statistics and update checks
 * off. A missing package fails the suite: these tests never skip.
 */
import fs from 'node:fs';
import path from 'node:path';
import { makeSandbox, ROOT, type Sandbox } from './cli.js';

export const GEMINI = path.join(ROOT, 'node_modules', '.bin', 'gemini');
export const GEMINI_VERSION = '0.61.0';

/** gemini-cli's own settings that keep it quiet and offline apart from the sign-in itself. */
export const QUIET_SETTINGS = {
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
};

export interface GeminiSandbox extends Sandbox {
  /** <home>/.gemini: gemini-cli's state dir. */
  geminiDir: string;
  settingsFile: string;
  tokenFile: string;
  writeGeminiSettings(extra?: Record<string, unknown>): void;
}

export function assertGeminiInstalled(): void {
  const pkg = path.join(ROOT, 'node_modules', '@google', 'gemini-cli', 'package.json');
  if (!fs.existsSync(GEMINI) || !fs.existsSync(pkg))
    throw new Error(`@google/gemini-cli is not installed (${GEMINI}); run npm ci: these tests need the real package`);
  const version = (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { version: string }).version;
  if (version !== GEMINI_VERSION)
    throw new Error(`@google/gemini-cli ${version} is installed, the tests are written against ${GEMINI_VERSION}`);
}

/**
 * No DISPLAY, CI, NO_BROWSER or proxy from the outer environment: each test
 * sets what it means. The server command names the program `gemini`, so
 * agyctl guesses the gemini-cli profile; tests also pass --profile where the
 * behaviour under test is the profile's.
 */
export function makeGeminiSandbox(extraEnv: NodeJS.ProcessEnv = {}): GeminiSandbox {
  assertGeminiInstalled();
  const base = makeSandbox({ AGYCTL_SERVER: `${GEMINI} --acp`, ...extraEnv });
  for (const k of [
    'DISPLAY',
    'WAYLAND_DISPLAY',
    'CI',
    'NO_BROWSER',
    'HTTPS_PROXY',
    'HTTP_PROXY',
    'https_proxy',
    'http_proxy',
    'NO_PROXY',
    'no_proxy',
    'GEMINI_API_KEY',
    'GOOGLE_API_KEY',
  ]) {
    if (!(k in extraEnv)) delete base.env[k];
  }
  const geminiDir = path.join(base.home, '.gemini');
  const settingsFile = path.join(geminiDir, 'settings.json');
  const writeGeminiSettings = (extra: Record<string, unknown> = {}): void => {
    fs.mkdirSync(geminiDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(settingsFile, `${JSON.stringify({ ...QUIET_SETTINGS, ...extra }, null, 2)}\n`);
  };
  writeGeminiSettings();
  return { ...base, geminiDir, settingsFile, tokenFile: path.join(geminiDir, 'oauth_creds.json'), writeGeminiSettings };
}
