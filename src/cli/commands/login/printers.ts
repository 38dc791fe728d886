/**
 * How a login is shown: the steps its use cases report (src/login/steps.ts),
 * rendered by one text printer or one --json printer behind one interface.
 * Every step's event goes to the output's event channel in both modes: only
 * --json prints it, and a supervisor's output forwards every one to its
 * clients. Warnings and notes for a person go to stderr in both modes; the
 * URL lines, the QR code and the progress sentences only in text mode.
 */
import path from 'node:path';
import type { TtyWritable } from '../../../core/io.js';
import { describePending, terminalLine } from '../../../login/detached/record.js';
import { fitQr, qrLines, screenOf } from '../../../login/qr.js';
import type { LoginReport } from '../../../login/run-login.js';
import type { LoginStep, StartStep, UrlOrigin } from '../../../login/steps.js';
import { tunnelExplanation } from '../../../login/tunnel.js';
import type { UnexpectedClient } from '../../../profiles/auth-url.js';
import type { Output } from '../../terminal/output.js';
import { printValue } from '../../terminal/output.js';

export interface Printer<Step> {
  show(step: Step): void | Promise<void>;
}

/** What the login's text shows besides the steps, decided by whoever knows how the login runs. */
export interface LoginDisplay {
  qr: boolean;
  /** Where a user without a tunnel gives the address or code (`pasteWhere`). */
  pasteWhere: string;
  /** The terminal a QR code is fitted to. */
  stderr: TtyWritable;
}

export const ALREADY_ARRIVED =
  'The sign-in already arrived, so there is nothing to deliver: the login is checking the credentials now.';

/** Where a user without a tunnel gives the address (or the code) the browser ended on. */
export function pasteWhere(how: { detached?: boolean | undefined; stdinPastes?: boolean | undefined }): string {
  if (how.detached) return 'give it to `agyctl login finish`';
  return how.stdinPastes === false ? 'give it to `agyctl login finish` in another shell' : 'paste it here';
}

/** The login's printer: its steps as they come, then the report of a login that succeeded. */
export interface LoginPrinter extends Printer<LoginStep> {
  finish(report: LoginReport, keepProbeSession: boolean): void;
}

export function loginPrinter(out: Output, display: LoginDisplay): LoginPrinter {
  return out.json ? new JsonLoginPrinter(out, display.qr) : new TextLoginPrinter(out, display);
}

export function startPrinter(out: Output): Printer<StartStep> {
  return out.json ? new JsonStartPrinter(out) : new TextStartPrinter(out);
}

/** A line shown with the URL: data on stdout (print), a message on stderr (info, warn). */
interface ShownLine {
  kind: 'print' | 'info' | 'warn';
  text: string;
}

/** The warning for a URL naming another OAuth client or more scopes than the server's known ones. */
export function unexpectedClientWarning(u: UnexpectedClient, what: string): string {
  const asks = [
    ...(u.clientId !== undefined ? [`the OAuth client ${u.clientId}`] : []),
    ...(u.scopes ? [`the scope(s) ${u.scopes.join(' ')}`] : []),
  ];
  return `this ${what} names ${asks.join(' and ')}, which this server's known sign-in does not use: check on Google's consent page which app asks for what before you allow it`;
}

/** What a person is told in both modes: warnings and notes on stderr, and --verbose detail. */
function notes(out: Output, step: LoginStep): void {
  switch (step.step) {
    case 'url': {
      const { origin } = step;
      const what = step.event.mode === 'device' ? 'sign-in page' : 'sign-in URL';
      if (origin) out.verbose(`${what} caught on ${origin.source}${origin.via ? ` (${origin.via})` : ''}`);
      const unexpected = step.event.unexpectedClient;
      if (unexpected) out.warn(unexpectedClientWarning(unexpected, what));
      return;
    }
    case 'method-mismatch': {
      const advice = step.canSetAuth ? ` (agyctl settings set-auth ${step.requested})` : '';
      out.warn(
        `settings.json says ${step.key} ${step.configured}, but you asked for --method ${step.requested}; the server will use ${step.configured} after a restart unless you change it${advice}`,
      );
      return;
    }
    case 'token-file-missing':
      out.info(
        `the server reported success but ${step.path} does not exist (some builds keep credentials elsewhere, e.g. the OS keyring); the proof below decides whether a restart keeps the login`,
      );
      return;
    case 'token-file-narrowed':
      out.warn(`${step.path} had mode ${step.from}; narrowed it to 0600 (it is a credential)`);
      return;
    case 'settings-changed': {
      const { authTypeBefore: before, authTypeAfter: after } = step.event;
      const note = `the server changed settings.json during the login (${step.key} ${String(before ?? 'unset')} -> ${String(after ?? 'unset')})`;
      // gemini-cli records the method it just used by design; elsewhere a rewrite may have replaced the user's choice.
      if (step.expected) out.info(note);
      else out.warn(note);
      return;
    }
    case 'auth-type-written':
      out.info(
        `settings.json had no ${step.key}; wrote ${step.key} = ${String(step.event.authTypeAfter)} so the server finds these credentials after a restart`,
      );
      return;
    case 'auth-type-differs': {
      const current = String(step.current);
      const advice = step.canSetAuth ? ` (change it with: agyctl settings set-auth ${step.method})` : '';
      out.warn(
        `settings.json names ${step.key} ${current}, not ${step.method}; left unchanged. The server will use ${current} after a restart${advice}`,
      );
      return;
    }
    case 'url-withdrawn':
      out.warn(
        `the server withdrew the sign-in URL (elicitation ${step.event.elicitationId}): do not open it any more; waiting up to ${step.event.graceS}s for the server's answer to the sign-in`,
      );
      return;
    case 'event':
      if (step.event.event === 'auth-status')
        out.verbose(
          `the server says: ${step.event.state}${step.event.account ? ` (${accountText(step.event.account)})` : ''}`,
        );
      return;
    case 'credentials-elsewhere':
      out.info(
        `note: no ${path.basename(step.tokenFile)}; the server holds credentials elsewhere, e.g. the OS keyring (a fresh server accepted them without authenticate)`,
      );
      return;
    default:
      return;
  }
}

class JsonLoginPrinter implements LoginPrinter {
  constructor(
    private readonly out: Output,
    private readonly qr: boolean,
  ) {}

  show(step: LoginStep): void {
    if ('event' in step) this.out.event(step.event);
    notes(this.out, step);
    if (step.step === 'url' && this.qr) this.out.info('QR code left out: --json prints no QR code.');
  }

  /** The events said it all; the --json document of the foreground is its own. */
  finish(): void {}
}

class TextLoginPrinter implements LoginPrinter {
  constructor(
    private readonly out: Output,
    private readonly display: LoginDisplay,
  ) {}

  async show(step: LoginStep): Promise<void> {
    const { out } = this;
    if ('event' in step) out.event(step.event); // printed only with --json; a supervisor forwards it
    notes(out, step);
    switch (step.step) {
      case 'url':
        return this.showUrl(step);
      case 'url-rejected':
        if (step.event.loud && step.event.url) out.warn(`ignoring ${step.text}`);
        else out.verbose(step.text);
        return;
      case 'no-url-yet':
        out.warn(
          `the server has not shown a sign-in URL after ${step.event.afterS}s; if this build only opens a browser when DISPLAY is set, do not pass --no-fake-display (run with --verbose to see its output)`,
        );
        return;
      case 'paste-refused':
        out.warn(`${step.event.event === 'code-rejected' ? 'not sent' : 'not delivered'}: ${step.event.reason}`);
        return;
      case 'authenticated':
        out.info(
          out.e.green(`Signed in (${step.event.method}). Checking that a fresh server accepts the credentials...`),
        );
        return;
      default:
        return;
    }
  }

  finish(report: LoginReport, keepProbeSession: boolean): void {
    const { out } = this;
    out.print(
      `Logged in with ${report.method}; a fresh server accepted the credentials (start-up ${report.proof.initMs} ms).`,
    );
    if (report.account) out.print(`Signed in as ${accountText(report.account)}.`);
    if (report.tokenFile?.exists)
      out.print(`Token file: ${report.tokenFile.path} (mode ${report.tokenFile.mode}; contents never shown).`);
    if (keepProbeSession) out.print(`Probe session kept: ${report.proof.sessionId}`);
  }

  /** The URL's lines, each value to copy alone on its stdout line, with its QR code above them when asked for and it fits. */
  private async showUrl(step: Extract<LoginStep, { step: 'url' }>): Promise<void> {
    const lines = [...elicitedLines(step.event.url, step.origin), ...this.urlLines(step)];
    if (this.display.qr) await this.showQr(step.event.url, lines);
    for (const line of lines) {
      if (line.kind === 'print') printValue(this.out, line.text);
      else if (line.kind === 'info') this.out.info(line.text);
      else this.out.warn(line.text);
    }
  }

  private urlLines(step: Extract<LoginStep, { step: 'url' }>): ShownLine[] {
    const { event } = step;
    const bold = this.out.e.bold;
    if (event.mode === 'device')
      return [
        { kind: 'info', text: bold('Open this page in a browser on your laptop and follow it:') },
        { kind: 'print', text: event.url },
        {
          kind: 'info',
          text: 'No tunnel and nothing to paste: the server sees the sign-in finish by itself. Waiting for it...',
        },
      ];
    if (event.mode === 'code-entry')
      return [
        ...(step.retry
          ? [
              {
                kind: 'warn' as const,
                text: 'the server could not use that code and started over: sign in again with this new URL',
              },
            ]
          : []),
        {
          kind: 'info',
          text: bold('Open this URL in any browser (this server uses code entry: no SSH tunnel needed):'),
        },
        { kind: 'print', text: event.url },
        {
          kind: 'info',
          text: `After you sign in, Google shows an authorization code: ${this.display.pasteWhere}.`,
        },
      ];
    return [
      { kind: 'info', text: bold('Open this URL in a browser on your laptop:') },
      { kind: 'print', text: event.url },
      { kind: 'info', text: bold('First run this on your laptop and leave it running:') },
      { kind: 'print', text: event.tunnel ?? '' },
      { kind: 'info', text: tunnelExplanation(event.port ?? 0) },
      {
        kind: 'info',
        text: `No tunnel? Sign in anyway; when the browser fails to load http://127.0.0.1:${event.port}/..., copy that address and ${this.display.pasteWhere}.`,
      },
    ];
  }

  private async showQr(url: string, after: readonly ShownLine[]): Promise<void> {
    const code = await qrLines(url);
    // Output.warn puts this prefix before the text.
    const shown = after.map((l) => (l.kind === 'warn' ? `warning: ${l.text}` : l.text));
    const fit = fitQr(code, screenOf(this.display.stderr), shown);
    this.out.info(fit.draw ? code.join('\n') : fit.note, { verbatim: fit.draw });
  }
}

/** An account for a person: its label and email, as the server (or gemini-cli's record) gave them, already sanitised. */
export function accountText(a: { label: string; email: string | null }): string {
  const label = terminalLine(a.label);
  return a.email ? `${label} <${terminalLine(a.email)}>` : label;
}

/** An elicited URL is shown with its host and what the agent said about it, as the ACP specification asks of a client. */
function elicitedLines(url: string, origin: UrlOrigin | undefined): ShownLine[] {
  if (origin?.source !== 'elicitation') return [];
  const host = new URL(url).hostname;
  // The server's words, quoted as such: only the URL above was checked.
  const said = origin.message ? `; its own words, not checked by agyctl: "${origin.message}"` : '';
  return [{ kind: 'info', text: `The server asks you to open a page on ${host} (ACP URL elicitation)${said}` }];
}

/** Warnings and notes of the foreground side, on stderr in both modes. */
function startNotes(out: Output, step: StartStep): void {
  if (step.step === 'previous-died')
    out.warn(`the previous login's supervisor (pid ${step.pid}) had died; cleaned up after it`);
  else if (step.step === 'already-arrived') out.info(ALREADY_ARRIVED);
  else if (step.step === 'undelivered') out.warn('could not reach the login supervisor to deliver that');
}

class JsonStartPrinter implements Printer<StartStep> {
  constructor(private readonly out: Output) {}

  show(step: StartStep): void {
    if (step.step === 'restarted') this.out.event(step.event);
    else if (step.step === 'detached') this.out.event(detachedEvent(step.state));
    startNotes(this.out, step);
  }
}

class TextStartPrinter implements Printer<StartStep> {
  constructor(private readonly out: Output) {}

  show(step: StartStep): void {
    const { out } = this;
    startNotes(out, step);
    switch (step.step) {
      case 'pending':
        for (const line of describePending(step.state).slice(1)) out.info(line);
        return;
      case 'restarting':
        out.info(`Cancelling the pending login (supervisor pid ${step.pid}) to start over...`);
        return;
      case 'cancelling':
        out.info('Cancelling the login...');
        return;
      case 'detached':
        out.info(
          `The login goes on in the background (supervisor pid ${step.state.pid}) until ${new Date(step.state.deadline).toISOString()}.`,
        );
        out.info(
          step.state.mode === 'device'
            ? 'Follow the page; the server sees the sign-in finish by itself. Then `agyctl login status --wait`. Stop it with `agyctl login cancel`.'
            : 'After signing in: `agyctl login finish` with the address your browser ended on (not needed when the tunnel carried it), then `agyctl login status --wait`. Stop it with `agyctl login cancel`.',
        );
        return;
      default:
        return;
    }
  }
}

function detachedEvent(s: Extract<StartStep, { step: 'detached' }>['state']) {
  return {
    event: 'detached',
    id: s.id,
    pid: s.pid,
    url: s.url ?? null,
    port: s.port ?? null,
    tunnel: s.tunnel ?? null,
    deadline: new Date(s.deadline).toISOString(),
  } as const;
}
