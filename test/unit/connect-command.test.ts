/** connect's remote command line and option validation: what reaches the remote shell must be exactly what was meant. */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { forwardSpec } from '../../src/connect/control-master.js';
import { manualResume } from '../../src/connect/reconnect.js';
import {
  PID_MARKER,
  remoteLoginCommand,
  shellQuote,
  validateDestination,
  validateSshOption,
} from '../../src/connect/remote-command.js';
import { knownEvent, parseEvent } from '../../src/connect/remote-login.js';

/** Run a command string the way sshd does: the login shell gets it as one `-c` argument. */
async function viaShell(command: string): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const r = await execa('sh', ['-c', command], { reject: false, timeout: 10_000, stdin: 'ignore' });
  return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode ?? -1 };
}

describe('remote command', () => {
  it('quotes words so the shell gives them back unchanged', async () => {
    const words = ['plain', 'two words', "it's", '$HOME', '`id`', 'a"b', 'back\\slash', '', '*', '; rm -rf /'];
    const r = await viaShell(`printf '%s\\n' ${words.map(shellQuote).join(' ')}`);
    expect(r.stdout.split('\n')).toEqual(words); // execa strips the final newline
  });

  it('runs the remote agyctl prefix with login --json and the options, after printing its pid', async () => {
    const command = remoteLoginCommand({
      remoteAgyctl: "env GREETING='hello there' printf '%s|'",
      method: 'oauth-personal',
      timeout: '30s',
    });
    const r = await viaShell(command);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('login|--json|--method|oauth-personal|--timeout|30s|');
    expect(r.stderr).toMatch(new RegExp(`^${PID_MARKER} \\d+$`));
  });

  it('keeps the pid it prints: the remote agyctl replaces the wrapper shell', async () => {
    const r = await viaShell(
      remoteLoginCommand({ remoteAgyctl: 'sh -c "echo \\$\\$" sh', method: undefined, timeout: undefined }),
    );
    const printed = /(\d+)/.exec(r.stderr)![1];
    expect(r.stdout.trim()).toBe(printed);
  });

  it('a missing remote agyctl exits 127, which connect turns into the install hint', async () => {
    const r = await viaShell(
      remoteLoginCommand({ remoteAgyctl: '/nonexistent/agyctl', method: undefined, timeout: '10m' }),
    );
    expect(r.exitCode).toBe(127);
  });
});

describe('validation', () => {
  it('accepts destinations ssh takes and refuses ones it would read as options', () => {
    expect(validateDestination('box')).toBe('box');
    expect(validateDestination(' me@box.example.com ')).toBe('me@box.example.com');
    for (const bad of ['-oProxyCommand=touch /tmp/x', '-oProxyCommand=x@host', 'a b', 'me@', '@box', 'me@-box', '']) {
      expect(() => validateDestination(bad), bad).toThrow(/destination must look like/);
    }
  });

  it('refuses destinations that would do more than name a host in a pasted command (exit 2, unsafe-destination)', () => {
    for (const good of ['root@10.203.0.1', 'ops.team@db-1.example.com', 'my_alias', '::1', 'me@[fe80::1%eth0]'])
      expect(validateDestination(good), good).toBe(good);
    for (const bad of [
      'box$(touch /tmp/x)',
      'me@box;id',
      'box`id`',
      "me@box'",
      'box"',
      'a|b',
      'box&',
      'a\nb',
      'b\u001b]0;x\u0007',
    ]) {
      let err: unknown;
      try {
        validateDestination(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toMatchObject({ code: 'unsafe-destination', exit: 2 });
      expect((err as Error).message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    }
  });

  it('prints resume commands that a shell runs as ssh -- DEST, each word quoted', async () => {
    const lines = manualResume(
      {
        destination: 'ops@box',
        sshOptions: ['ProxyCommand=nc %h %p', "IdentityFile=/k'ey"],
        remoteAgyctl: 'env HOME=/h agyctl',
        sshTimeoutMs: 1,
        deadline: 0,
      },
      4242,
    );
    // Each line, run by sh with `ssh` replaced by printf, gives back exactly the argv ssh would get.
    for (const line of lines) {
      const argv = (await viaShell(`ssh() { printf '%s\\n' "$@"; }; ${line.replace(/ {3}#.*$/, '')}`)).stdout.split(
        '\n',
      );
      expect(argv.slice(0, 4)).toEqual(['-o', 'ProxyCommand=nc %h %p', '-o', "IdentityFile=/k'ey"]);
      const dash = argv.indexOf('--');
      expect(dash, line).toBeGreaterThan(3);
      expect(argv[dash + 1]).toBe('ops@box');
    }
    expect(lines[0]).toContain("-- ops@box 'env HOME=/h agyctl login status'");
    expect(lines[1]).toContain('-N -L 4242:127.0.0.1:4242 -o ExitOnForwardFailure=yes -- ops@box');
  });

  it('accepts ssh_config settings for --ssh-option and refuses flags', () => {
    expect(validateSshOption('Port=2222')).toBe('Port=2222');
    expect(validateSshOption('ConnectTimeout 10')).toBe('ConnectTimeout 10');
    for (const bad of ['-p 22', 'Port', '=2222', '']) expect(() => validateSshOption(bad), bad).toThrow(/--ssh-option/);
  });

  it('forwards the same port on both ends, to the remote loopback', () => {
    expect(forwardSpec(43161)).toBe('43161:127.0.0.1:43161');
  });
});

describe('remote output', () => {
  it('takes events, turns a one-document usage error into an error event, and leaves anything else as noise', () => {
    expect(parseEvent('{"event":"url","port":1}')).toEqual({ event: 'url', port: 1 });
    expect(parseEvent('{"schemaVersion":1,"ok":false,"error":{"code":"usage","exit":2,"message":"m"}}')).toEqual({
      event: 'error',
      code: 'usage',
      exit: 2,
      message: 'm',
    });
    expect(parseEvent('Welcome to the box!')).toBeUndefined();
    expect(parseEvent('{"not":"an event"}')).toBeUndefined();
    expect(parseEvent('{broken')).toBeUndefined();
  });

  it("knows login's own events and the final error by name, and leaves a newer remote's events unknown (passed through, never read)", () => {
    expect(knownEvent({ event: 'url', port: 1 })).toEqual({ event: 'url', port: 1 });
    expect(knownEvent({ event: 'error', code: 'usage' })?.event).toBe('error');
    expect(knownEvent({ event: 'verified' })?.event).toBe('verified');
    expect(knownEvent({ event: 'brand-new-event', url: 'https://example.com' })).toBeUndefined();
    expect(knownEvent({ event: 'toString' })).toBeUndefined();
  });
});
