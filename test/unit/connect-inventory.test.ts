/**
 * Fleet connect's host list: an Ansible inventory read by Ansible itself
 * (ansible-inventory; connection variables become ssh settings), a plain
 * one-host-per-line file without Ansible, --limit, and untrusted entries.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readInventory, targetsFromArgs } from '../../src/connect/inventory.js';
import { AgyError } from '../../src/core/errors.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The test's own directory, removed after it. */
function scratch(): string {
  dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-inv-'));
  return dir;
}

function file(name: string, text: string): string {
  const p = path.join(scratch(), name);
  fs.writeFileSync(p, text);
  return p;
}

/**
 * A HOME of the test's own: ansible-inventory writes ~/.ansible/tmp, which in a shared HOME such as
 * /tmp other runs (another checkout's suite, another user) would share and could leave unwritable.
 */
function home(): string {
  const home = path.join(scratch(), 'home');
  fs.mkdirSync(home, { recursive: true });
  return home;
}
const withAnsible = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: home(), LANG: 'C.UTF-8' });
const withoutAnsible = (): NodeJS.ProcessEnv => ({ PATH: '/nonexistent-bin', HOME: home() });

describe('readInventory', () => {
  it('reads an INI inventory through ansible-inventory, with connection variables as ssh settings', async () => {
    const inv = file(
      'hosts.ini',
      '[web]\nbox1 ansible_host=10.0.0.5 ansible_user=agy ansible_port=2222\nbox2\n[db]\nbox3 ansible_ssh_private_key_file=/keys/db\n',
    );
    const targets = await readInventory(inv, undefined, withAnsible());
    expect(targets).toEqual([
      { name: 'box1', destination: '10.0.0.5', sshOptions: ['User=agy', 'Port=2222'] },
      { name: 'box2', destination: 'box2', sshOptions: [] },
      { name: 'box3', destination: 'box3', sshOptions: ['IdentityFile=/keys/db'] },
    ]);
    expect((await readInventory(inv, 'db', withAnsible())).map((t) => t.name)).toEqual(['box3']);
  });

  it('reads a plain list without Ansible; --limit takes globs', async () => {
    const inv = file('hosts.txt', '# build boxes\nbuild-1\nme@build-2   \n\nci-runner\n');
    expect((await readInventory(inv, undefined, withoutAnsible())).map((t) => t.destination)).toEqual([
      'build-1',
      'me@build-2',
      'ci-runner',
    ]);
    expect((await readInventory(inv, 'build-*', withoutAnsible())).map((t) => t.name)).toEqual(['build-1']);
    expect((await readInventory(inv, '*build-*,ci-*', withoutAnsible())).map((t) => t.name)).toEqual([
      'build-1',
      'me@build-2',
      'ci-runner',
    ]);
  });

  it('refuses an Ansible format without Ansible, a pattern that selects nothing, and hosts ssh would take as options', async () => {
    await expect(
      readInventory(file('a.ini', '[web]\nbox1 ansible_port=22\n'), undefined, withoutAnsible()),
    ).rejects.toThrow(/not a plain list of hosts.*Ansible is not installed/);
    await expect(readInventory(file('b.txt', 'box1\n'), 'nomatch*', withoutAnsible())).rejects.toThrow(
      /selects no hosts/,
    );
    await expect(readInventory(file('c.txt', '-oProxyCommand=evil\n'), undefined, withoutAnsible())).rejects.toThrow(
      /not a plain list|must look like host/,
    );
    await expect(
      readInventory(file('d.ini', 'box1 ansible_host=-oProxyCommand=x\n'), undefined, withAnsible()),
    ).rejects.toThrow(/must look like host/);
    await expect(readInventory(file('e.ini', 'box1 ansible_port=22x\n'), undefined, withAnsible())).rejects.toThrow(
      /is not a port/,
    );
    const err = await readInventory(path.join(scratch(), 'no-such-inventory'), undefined, withAnsible()).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgyError);
    expect((err as AgyError).exit).toBe(2);
  });

  it('takes destinations from the command line as they are, validated', () => {
    expect(targetsFromArgs(['h1', 'me@h2'])).toEqual([
      { name: 'h1', destination: 'h1', sshOptions: [] },
      { name: 'me@h2', destination: 'me@h2', sshOptions: [] },
    ]);
    expect(() => targetsFromArgs(['-oX=y'])).toThrow(/must look like host/);
  });
});

describe('an inventory that names hosts with terminal tricks or tokens', () => {
  // eslint-disable-next-line no-control-regex
  const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
  const ESC = '\u001b]0;pwned\u0007\u001b[2J\u009b31m';

  /** A stand-in for ansible-inventory (a dynamic inventory's names come from a cloud API or a CMDB). */
  function fakeAnsible(doc: unknown, exit = 0, stderr = ''): NodeJS.ProcessEnv {
    const bin = path.join(path.dirname(file('doc.json', '')), 'bin');
    fs.mkdirSync(bin);
    const json = file('doc.json', JSON.stringify(doc));
    const err = file('err.txt', stderr);
    fs.writeFileSync(
      path.join(bin, 'ansible-inventory'),
      `#!/bin/sh\ncat '${json}'\ncat '${err}' >&2\nexit ${exit}\n`,
      {
        mode: 0o755,
      },
    );
    return { PATH: `${bin}:/usr/bin:/bin`, HOME: home() };
  }

  it('shows host names without control characters and with tokens redacted', async () => {
    const name = `web${ESC}-ya29.a0LEAKEDtoken0123`;
    const env = fakeAnsible({
      all: { children: ['web'] },
      web: { hosts: [name] },
      _meta: { hostvars: { [name]: { ansible_host: '10.0.0.7' } } },
    });
    const [target] = await readInventory(file('inv.yml', 'x'), undefined, env);
    expect(target!.destination).toBe('10.0.0.7');
    expect(target!.name).not.toMatch(CONTROL);
    expect(target!.name).not.toContain('LEAKED');
    expect(target!.name).toMatch(/^web.*\[REDACTED\]/);
  });

  it('a host name used as the destination is refused as unsafe, and the message is clean', async () => {
    const env = fakeAnsible({ all: { hosts: [`box$(id)${ESC}`] } });
    const err = await readInventory(file('inv.yml', 'x'), undefined, env).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unsafe-destination', exit: 2 });
    expect((err as Error).message).not.toMatch(CONTROL);
  });

  it("ansible-inventory's own complaint is shown clean", async () => {
    const env = fakeAnsible({}, 1, `bad file ${ESC} token ya29.a0LEAKEDtoken0123\n`);
    const err = (await readInventory(file('inv.yml', 'x'), undefined, env).catch((e: unknown) => e)) as AgyError;
    expect(err.exit).toBe(2);
    expect(err.message).toContain('bad file');
    expect(err.message).not.toMatch(CONTROL);
    expect(err.message).not.toContain('LEAKED');
  });
});
