// connect's rendering of the remote login's events for a person: quiet
// evidence (`loud: false` url-rejected, e.g. a docs link or `xdg-open
// --version`) stays out of the way, a loud one warns, and the events that
// the local side writes from its own events print nothing here.
import { describe, expect, it } from 'vitest';
import { JsonPrinter } from '../../src/cli/commands/connect/json-printer.js';
import { renderRemoteEvent, summaryLine, TextPrinter } from '../../src/cli/commands/connect/text-printer.js';
import type { ConnectEvent } from '../../src/connect/events.js';
import { checkRemoteUrl } from '../../src/connect/host-session.js';
import type { RemoteEvent } from '../../src/connect/remote-login.js';
import { type CommandIO, PLAIN, type Reporter } from '../../src/core/io.js';

function recorder(): { out: Reporter; lines: string[] } {
  const lines: string[] = [];
  const rec =
    (kind: string) =>
    (s = ''): void => {
      lines.push(`${kind}: ${s}`);
    };
  const out: Reporter = {
    c: PLAIN,
    e: PLAIN,
    json: false,
    stderrIsTTY: false,
    stdoutIsTTY: false,
    stderrEscapes: false,
    print: rec('print'),
    info: rec('info'),
    warn: rec('warn'),
    verbose: rec('verbose'),
    server: (note) => lines.push(`server: ${JSON.stringify(note)}`),
    status: rec('status'),
    clearStatus: () => {},
    event: (e) => lines.push(`event: ${JSON.stringify(e)}`),
    error: rec('error'),
  };
  return { out, lines };
}

const render = (ev: Record<string, unknown>): string[] => {
  const { out, lines } = recorder();
  renderRemoteEvent(out, ev as RemoteEvent);
  return lines;
};

describe('renderRemoteEvent', () => {
  it('keeps quiet evidence quiet and warns on a loud rejected URL (also when loud is absent, as older remotes send it)', () => {
    expect(
      render({ event: 'url-rejected', loud: false, reason: 'not a Google sign-in URL', source: 'stdout' }),
    ).toEqual([]);
    for (const loud of [true, undefined]) {
      const lines = render({ event: 'url-rejected', loud, reason: 'host is example.com' });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^warn: .*host is example\.com.*still waiting/);
    }
  });

  it('renders progress lines and leaves url, waiting, verified and error to the local side', () => {
    expect(render({ event: 'server-started', pid: 42, agent: { version: 'v1' }, ms: 900 })).toEqual([
      'info: Remote server started (pid 42, v1) in 900 ms.',
    ]);
    expect(render({ event: 'no-url-yet', afterS: 20 })[0]).toMatch(/^warn: .*after 20s/);
    expect(render({ event: 'redirect-delivered', status: 200 })).toEqual([
      'info: The remote login received the pasted address (HTTP 200).',
    ]);
    for (const event of ['url', 'waiting', 'verified', 'error', 'settings-changed'])
      expect(render({ event })).toEqual([]);
  });
});

describe('summaryLine', () => {
  it('names the proof and the token mode when the remote reported them', () => {
    expect(summaryLine('box', undefined)).toBe('Logged in on box.');
    expect(summaryLine('box', { event: 'verified', serverStartMs: 812, tokenFile: { mode: '0600' } })).toBe(
      'Logged in on box: a fresh server there accepted the credentials (start-up 812 ms); token file mode 0600.',
    );
  });
});

describe("checkRemoteUrl: the laptop's own check of a remote url event", () => {
  const device = 'https://www.google.com/device?user_code=ABCD-EFGH';
  const loopback =
    'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A35293%2F&state=s';

  it('accepts a device page on Google with no loopback redirect, shown as it is', () => {
    expect(checkRemoteUrl({ event: 'url', mode: 'device', url: device })).toEqual({ ok: true });
  });

  it('refuses a device event on a lookalike host or carrying a loopback redirect', () => {
    expect(checkRemoteUrl({ event: 'url', mode: 'device', url: 'https://www.google.com.evil.example/device' }).ok).toBe(
      false,
    );
    expect(checkRemoteUrl({ event: 'url', mode: 'device', url: 'https://xn--ggle-0nda.com/device' }).ok).toBe(false);
    expect(checkRemoteUrl({ event: 'url', mode: 'device', url: loopback })).toMatchObject({ ok: false });
  });

  it('still requires the forwarded port for a loopback sign-in URL', () => {
    expect(checkRemoteUrl({ event: 'url', mode: 'loopback', url: loopback, port: 35293 })).toEqual({ ok: true });
    expect(checkRemoteUrl({ event: 'url', mode: 'loopback', url: loopback, port: 1 }).ok).toBe(false);
  });
});

/** What each printer writes for these events, as `kind: text` lines. */
function printed(json: boolean, events: ConnectEvent[], redraw?: () => void): string[] {
  const { out, lines } = recorder();
  const printer = json ? new JsonPrinter(out) : new TextPrinter({ out } as CommandIO);
  for (const event of events) printer.event(event, redraw);
  return lines;
}

describe('the connect printers', () => {
  const relay: ConnectEvent = {
    type: 'route',
    choice: {
      route: 'relay',
      port: 4242,
      reason: 'the SSH server does not let a connection through',
      probe: { allowed: false, ms: 7, message: 'refused' },
    },
    url: 'https://accounts.google.com/o/oauth2/v2/auth?x=1',
    destination: 'ops@box',
    open: false,
  };

  it("JSON: a route is two events, and a fleet host's events carry its name last", () => {
    expect(printed(true, [relay])).toEqual([
      'event: {"event":"relay-listening","port":4242,"local":"127.0.0.1:4242","reason":"the SSH server does not let a connection through"}',
      'event: {"event":"route","route":"relay","port":4242,"reason":"the SSH server does not let a connection through","probeMs":7}',
    ]);
    expect(
      printed(true, [
        { type: 'on-host', host: 'web1', event: { type: 'host-connected', destination: 'ops@web1', ms: 12 } },
      ]),
    ).toEqual(['event: {"event":"connected","destination":"ops@web1","ms":12,"host":"web1"}']);
  });

  it('text: the relay route says why and shows the URL on stdout; JSON mode writes none of it', () => {
    const lines = printed(false, [relay]);
    expect(lines[0]).toBe(
      "info: The SSH server does not let a connection through: relaying the browser's redirect over the SSH session instead (listening on 127.0.0.1:4242 on this machine).",
    );
    expect(lines).toContain('print: https://accounts.google.com/o/oauth2/v2/auth?x=1');
    expect(
      printed(true, [{ type: 'cancelling' }, { type: 'logged-in', destination: 'ops@box', verified: undefined }]),
    ).toEqual([]);
  });

  it('both modes warn about a forward left behind and show the remote stderr above the paste prompt', () => {
    const left: ConnectEvent = { type: 'forward-removed', port: 4242, ok: false, message: 'no such forward' };
    const warning = 'warn: could not remove the forward of port 4242: no such forward; it ends with the SSH connection';
    expect(printed(false, [left])).toEqual([warning]);
    expect(printed(true, [left])).toEqual(['event: {"event":"forward-removed","port":4242,"ok":false}', warning]);
    let redrawn = 0;
    expect(printed(true, [{ type: 'remote-output', line: 'hello' }], () => (redrawn += 1))).toEqual([
      'info: remote: hello',
    ]);
    expect(redrawn).toBe(1);
  });
});
