/**
 * A hostile remote agyctl in `connect`. The laptop checks the
 * sign-in URL itself (the same validator as login; its redirect port must
 * be the one it forwards) before printing or opening it, and strips control
 * characters from everything remote it shows. The remote side is
 * test/fixtures/hostile-remote.mjs behind --remote-agyctl, over real SSH.
 *
 * @module-tag root
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, makeSandbox, ROOT, type Sandbox } from '../../helpers/cli.js';
import { connectArgs, requireLab, type SshLab, useSshLab } from '../../helpers/netns.js';

const NODE = process.execPath;
const SHIM = path.join(ROOT, 'test', 'helpers', 'browser-shim.mjs');
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'hostile-remote.mjs');
const PORT = 45123;
const GOOD = `https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=x&redirect_uri=${encodeURIComponent(`http://127.0.0.1:${PORT}/`)}&state=s1`;

const fx = useSshLab();
const sq = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

function laptop(lab: SshLab): { sb: Sandbox; shimLog: string } {
  const sb = makeSandbox();
  const shimLog = path.join(sb.root, 'browser.log');
  const browser = path.join(sb.root, 'browser');
  fs.writeFileSync(browser, `#!/bin/sh\nexec ${NODE} ${SHIM} "$@"\n`, { mode: 0o755 });
  sb.env = { ...sb.env, PATH: `${lab.sshBareBin}:${process.env.PATH}`, BROWSER: browser, SHIM_LOG: shimLog };
  return { sb, shimLog };
}

async function connectTo(lab: SshLab, url: string, port: number, json: boolean) {
  const { sb, shimLog } = laptop(lab);
  const remote = `env HOSTILE_URL=${sq(url)} HOSTILE_PORT=${port} ${NODE} ${FIXTURE}`;
  const args = [BIN, ...connectArgs(lab, remote, json ? ['--json'] : [])];
  const child = lab.run(lab.laptop, NODE, args, { env: sb.env, stdin: 'pipe', timeoutMs: 45_000, cwd: sb.root });
  fx.track(child);
  const r = await child;
  const opened = fs.existsSync(shimLog) ? fs.readFileSync(shimLog, 'utf8') : '';
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr), opened };
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe('connect against a hostile remote agyctl', () => {
  const hostile: Array<[string, string, number]> = [
    ['a file: URL', 'file:///etc/passwd', PORT],
    ['a javascript: URL', 'javascript:alert(document.cookie)', PORT],
    [
      'a look-alike host',
      `https://evil.example/o/oauth2/v2/auth?response_type=code&redirect_uri=${encodeURIComponent(`http://127.0.0.1:${PORT}/`)}`,
      PORT,
    ],
    ['a Google URL whose redirect port is not the forwarded one', GOOD, PORT + 1],
  ];

  it.for(hostile)(
    '%s is neither printed nor opened; no control character reaches the terminal',
    async ([, url, port], ctx) => {
      const lab = requireLab(fx.result(), ctx);
      const human = await connectTo(lab, url, port, false);
      expect(human.exitCode, human.stderr).toBe(3);
      expect(human.opened).toBe('');
      expect(human.stdout).not.toContain(url);
      expect(human.stderr).toContain('not shown or opened');
      expect(human.stdout + human.stderr).not.toMatch(CONTROL);
      expect(human.stderr).not.toContain('LEAKED');
      const json = await connectTo(lab, url, port, true);
      expect(json.opened).toBe('');
      const events = json.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(events.filter((e) => e.event === 'url')).toEqual([]);
      expect(events.find((e) => e.event === 'url-rejected')).toMatchObject({ source: 'remote' });
      expect(JSON.stringify(events)).not.toMatch(/\\u001b|\\u0007|\\u009b/);
    },
  );

  it('a valid URL with the right port is still shown (the escapes around it are stripped)', async (ctx) => {
    const lab = requireLab(fx.result(), ctx);
    const human = await connectTo(lab, GOOD, PORT, false);
    expect(human.stdout.split('\n')).toContain(GOOD);
    expect(human.stdout + human.stderr).not.toMatch(CONTROL);
    expect(human.stderr).toContain('remote says hello');
  });
});
