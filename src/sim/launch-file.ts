// Launchers handed a local file that leads to the URL instead of the URL
// itself: an HTML page with a meta refresh, as notebook servers
// write one (the URL entity-encoded, as a template engine leaves it), a
// .desktop link or a .url shortcut. The page is written 0600 in a private
// 0700 directory and removed when the process exits: on exit(), SIGINT and
// SIGTERM (then the signal is raised again, so the process still ends by it);
// with AGY_SIM_IGNORE_SIGTERM=1 SIGTERM is left ignored and the page stays
// until the process exits. SIGKILL leaves it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export type PageKind = 'html' | 'desktop' | 'url';

const PAGE_NAMES: Record<PageKind, string> = { html: 'signin.html', desktop: 'signin.desktop', url: 'signin.url' };

const htmlAttr = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The page's text for this URL. */
export function pageText(kind: PageKind, url: string): string {
  switch (kind) {
    case 'html':
      return [
        '<!DOCTYPE html>',
        '<html>',
        '<head>',
        '  <meta charset="UTF-8">',
        `  <meta http-equiv="refresh" content="1;url=${htmlAttr(url)}" />`,
        '  <title>Opening the sign-in page</title>',
        '</head>',
        '<body>',
        `  <p>This page should take you to the sign-in page. If it does not, <a href="${htmlAttr(url)}">click here</a>.</p>`,
        '</body>',
        '</html>',
        '',
      ].join('\n');
    case 'desktop':
      return ['[Desktop Entry]', 'Version=1.0', 'Type=Link', 'Name=Sign in to Google', `URL=${url}`, ''].join('\n');
    case 'url':
      return ['[InternetShortcut]', `URL=${url}`, ''].join('\r\n');
  }
}

const dirs = new Set<string>();
let armed = false;

function removePages(): void {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

/** Remove the pages, then end by the signal as if nobody had caught it. */
function onSignal(signal: NodeJS.Signals): void {
  removePages();
  process.kill(process.pid, signal);
}

function armCleanup(ignoreSigterm: boolean): void {
  if (armed) return;
  armed = true;
  process.once('exit', removePages);
  process.once('SIGINT', onSignal);
  if (!ignoreSigterm) process.once('SIGTERM', onSignal);
}

/** Writes the page for `url`; returns its absolute path. */
export function writePage(kind: PageKind, url: string, ignoreSigterm: boolean): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agy-sim-page-'));
  dirs.add(dir);
  armCleanup(ignoreSigterm);
  fs.chmodSync(dir, 0o700);
  const file = path.join(dir, PAGE_NAMES[kind]);
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  try {
    fs.fchmodSync(fd, 0o600);
    fs.writeSync(fd, pageText(kind, url));
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

/** The page as a launcher gets it: its path, or its file:// URL (percent-encoded). */
export function pageReference(file: string, asUrl: boolean): string {
  return asUrl ? pathToFileURL(file).href : file;
}
