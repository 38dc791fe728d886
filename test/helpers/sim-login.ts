/**
 * Log a sandbox in the way a person would, through the simulator's real
 * OAuth loopback flow (before `agyctl login` existed): settings.json gets
 * auth.type oauth-personal, the server runs `authenticate`, a BROWSER shim
 * records the URL it opens, and the test plays Google's redirect to the
 * loopback with a code and the right state. The simulator writes
 * acp_token.json (0600) itself.
 */

import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { type Sandbox, SIM, writeSettings } from './cli.js';
import { until } from './until.js';

export async function loginViaSim(sandbox: Sandbox, timeoutMs = 15_000): Promise<void> {
  writeSettings(sandbox, { auth: { type: 'oauth-personal' } });
  const urlFile = path.join(sandbox.root, 'browser-urls.txt');
  const shim = path.join(sandbox.root, 'browser-shim');
  fs.writeFileSync(shim, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${urlFile}'\n`, { mode: 0o755 });
  const sim = execa('node', [SIM], {
    env: { ...sandbox.env, BROWSER: shim },
    extendEnv: false,
    cwd: sandbox.root,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    reject: false,
    timeout: timeoutMs,
    buffer: false,
  });
  const answers = new Map<number, { result?: unknown; error?: unknown }>();
  let pending = '';
  sim.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      try {
        const msg = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
        if (typeof msg.id === 'number') answers.set(msg.id, msg);
      } catch {
        /* not JSON */
      }
    }
  });
  const send = (id: number, method: string, params: unknown): void =>
    void sim.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  try {
    send(1, 'initialize', {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    await until('initialize', timeoutMs, () => answers.get(1));
    send(2, 'authenticate', { methodId: 'oauth-personal' });
    const url = await until('the browser shim', timeoutMs, () =>
      fs.existsSync(urlFile) ? fs.readFileSync(urlFile, 'utf8').trim().split('\n')[0] || undefined : undefined,
    );
    const auth = new URL(url);
    const redirect = new URL(auth.searchParams.get('redirect_uri')!);
    redirect.searchParams.set('code', 'sim-code');
    redirect.searchParams.set('state', auth.searchParams.get('state')!);
    const page = await fetch(redirect, { signal: AbortSignal.timeout(timeoutMs) });
    if (page.status !== 200) throw new Error(`the loopback answered ${page.status}`);
    const answer = await until('authenticate', timeoutMs, () => answers.get(2));
    if (answer.error) throw new Error(`authenticate failed: ${JSON.stringify(answer.error)}`);
  } finally {
    sim.stdin!.end();
    await sim;
  }
}
