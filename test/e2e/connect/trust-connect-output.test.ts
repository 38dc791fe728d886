/**
 * A fleet `connect` shows a host's words (its check's status,
 * findings and stderr, ssh's complaint, its login's events) redacted and
 * without control characters, in human output and --json alike, as a
 * single-host login does. The hosts are played by a stand-in `ssh` that runs
 * the "remote" command here (so no network namespace is needed) and a host
 * named bad-* whose ssh fails with a hostile message; the remote agyctl is
 * test/fixtures/hostile-remote.mjs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { BIN, makeSandbox, parseEvents, ROOT, type Sandbox } from '../../helpers/cli.js';

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'hostile-remote.mjs');

/**
 * ssh as connect uses it: `-M` holds a control socket until `-O exit`, other
 * `-O` operations succeed, a command runs through sh here. bad-* hosts fail
 * the way a hostile server's banner or a shell rc file can make ssh fail.
 */
const FAKE_SSH = `#!/bin/sh
master=0; op=""; sock=""
while [ $# -gt 0 ]; do
  case "$1" in
    -M) master=1 ;;
    -S) sock="$2"; shift ;;
    -O) op="$2"; shift ;;
    -o|-L) shift ;;
    --) shift; break ;;
  esac
  shift
done
dest="$1"; shift
case "$dest" in
  bad*) printf 'ssh: connect to host %s: \\033]0;pwned\\007\\033[2Jrefused ya29.a0LEAKEDtoken0123\\n' "$dest" >&2; exit 255 ;;
esac
if [ "$master" = 1 ]; then
  echo $$ > "$sock.pid"; : > "$sock"
  trap 'rm -f "$sock" "$sock.pid"; kill $sp 2>/dev/null; exit 0' TERM
  sleep 600 & sp=$!; wait $sp; exit 0
fi
if [ -n "$op" ]; then
  [ "$op" = exit ] && kill -TERM "$(cat "$sock.pid")"
  exit 0
fi
exec sh -c "$1"
`;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const ESCAPED = /\\u001b|\\u0007|\\u009b/;

let sandbox: Sandbox | undefined;

async function fleetConnect(json: boolean) {
  sandbox = makeSandbox();
  const bin = path.join(sandbox.root, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'ssh'), FAKE_SSH, { mode: 0o755 });
  const remote = `env HOSTILE_WAIT_MS=300 HOSTILE_URL=https://evil.example/ ${process.execPath} ${FIXTURE}`;
  const r = await execa(
    process.execPath,
    [
      BIN,
      'connect',
      'host-a',
      'bad-b',
      '--no-open',
      '--timeout',
      '30s',
      '--remote-agyctl',
      remote,
      ...(json ? ['--json'] : []),
    ],
    {
      env: { ...sandbox.env, PATH: `${bin}:${process.env.PATH}` },
      extendEnv: false,
      cwd: sandbox.root,
      stdin: 'ignore',
      reject: false,
      timeout: 60_000,
    },
  );
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

describe('fleet connect with hostile hosts', () => {
  it('prints the remote check, the login and ssh failure without control characters or tokens', async () => {
    const r = await fleetConnect(false);
    expect(r.exitCode, r.stderr).toBe(4);
    const all = r.stdout + r.stderr;
    expect(all).not.toMatch(CONTROL);
    expect(all).not.toContain('LEAKED');
    expect(r.stderr).toContain('host-a: not-authenticated (token: expired');
    expect(r.stderr).toMatch(/SSH to bad-b failed: ssh: connect to host bad-b: refused \[REDACTED\]/);
    expect(r.stdout).toMatch(/^bad-b +failed .*refused \[REDACTED\]$/m);
  });

  it('--json carries the same cleaned strings: checked, host-result and fleet-summary', async () => {
    const r = await fleetConnect(true);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stdout).not.toMatch(ESCAPED);
    expect(r.stdout).not.toContain('LEAKED');
    expect(r.stdout).not.toMatch(CONTROL);
    const events = parseEvents(r.stdout);
    const checked = events.find((e) => e.event === 'checked' && e.host === 'host-a');
    expect(checked).toMatchObject({ status: 'not-authenticated' });
    expect(checked?.findings).toEqual(['token: expired  second line [REDACTED]']);
    const bad = events.find((e) => e.event === 'host-result' && e.host === 'bad-b');
    expect(bad).toMatchObject({ result: 'failed', exit: 4, error: { code: 'ssh-failed' } });
  });
});
