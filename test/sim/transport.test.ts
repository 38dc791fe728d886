// The simulator's process lifecycle and JSON-RPC framing.
// Drives scripts/agy-acp-sim over stdio (docs/simulator.md); shared setup in ./helpers.ts.
import { describe, expect, it } from 'vitest';
import { INITIALIZE_RESULT, Sim, sleep, startOAuth, tcpProbe, tmp, useSimulator } from './helpers.js';

useSimulator();

describe('process lifecycle and framing', () => {
  it('is silent until the first request, then answers initialize verbatim', async () => {
    const sim = new Sim(tmp());
    await sleep(400);
    expect(sim.stdout).toBe('');
    expect(sim.stderr).toBe('');
    const r = await sim.request('initialize', {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    expect(r).toEqual({ jsonrpc: '2.0', id: 1, result: INITIALIZE_RESULT });
  });

  it('accepts --debug, --notices and --uid=; rejects unknown flags with exit 2', async () => {
    const ok = new Sim(tmp(), {}, ['--debug', '--notices', '--uid=12345']);
    expect((await ok.request('initialize', { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    expect(ok.stderr).toBe('');

    const bad = new Sim(tmp(), {}, ['--model=x']);
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr).toMatch(/unknown flag '--model=x'/);
    expect(bad.stderr).toMatch(/usage:/);
    expect(bad.stdout).toBe('');
  });

  it('rejects a malformed switch with exit 2', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'carrier-pigeon' });
    expect((await sim.exited).code).toBe(2);
    expect(sim.stderr).toMatch(/AGY_SIM_LAUNCH/);
  });

  it('AGY_SIM_VERSION overrides agentInfo.version', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_VERSION: 'agy_acp_server_20270101_02_RC07' });
    const r = await sim.result('initialize', { protocolVersion: 1 });
    expect(r.agentInfo).toEqual({
      name: 'antigravity-acp',
      title: 'Google Antigravity',
      version: 'agy_acp_server_20270101_02_RC07',
    });
  });

  it('AGY_SIM_STARTUP_MS delays the first answer, measured from process start', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_STARTUP_MS: '800' });
    const id = sim.start('initialize', { protocolVersion: 1 });
    await sim.response(id);
    expect(Date.now() - sim.spawnedAt).toBeGreaterThanOrEqual(790);
    // Later requests are not delayed again.
    const t0 = Date.now();
    await sim.request('initialize', { protocolVersion: 1 });
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it('AGY_SIM_EXIT_AT_START exits with that code before reading anything', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_EXIT_AT_START: '3' });
    expect((await sim.exited).code).toBe(3);
    expect(sim.stderr.split('\n')[0]).toBe('error: simulated startup failure');
    expect(sim.stderr.trim().split('\n').length).toBeGreaterThanOrEqual(3);
    expect(sim.stdout).toBe('');
  });

  it('AGY_SIM_HUGE_LINE_BYTES pads initialize into one multi-MB line', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_HUGE_LINE_BYTES: '3000000' });
    const r = await sim.request('initialize', { protocolVersion: 1 }, 15_000);
    expect(r.result._meta.padding.length).toBe(3_000_000);
    expect(r.result.agentInfo.name).toBe('antigravity-acp');
    expect(sim.rawLines.length).toBe(1);
  });

  it('answers a parse error with -32700 and id null, then keeps going', async () => {
    const sim = new Sim(tmp());
    sim.sendRaw('{"jsonrpc":"2.0","id":1,"method":');
    const r = await sim.response(null);
    expect(r).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    expect((await sim.request('initialize', { protocolVersion: 1 })).result.protocolVersion).toBe(1);
  });

  it('answers unknown methods with -32601 and data.method', async () => {
    const sim = new Sim(tmp());
    const r = await sim.request('session/fly', {});
    expect(r.error).toEqual({ code: -32601, message: 'Method not found', data: { method: 'session/fly' } });
  });

  it('session/cancel: -32601 as a request, silently ignored as a notification', async () => {
    const sim = new Sim(tmp());
    const r = await sim.request('session/cancel', { sessionId: 'x' });
    expect(r.error).toEqual({ code: -32601, message: 'Method not found', data: { method: 'session/cancel' } });
    const before = sim.messages.length;
    sim.send({ method: 'session/cancel', params: { sessionId: 'x' } });
    const id = sim.start('initialize', { protocolVersion: 1 });
    await sim.response(id);
    expect(sim.messages.slice(before).map((m) => m.id)).toEqual([id]);
  });

  it('exits 0 on stdin EOF, even with an authenticate pending', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_LAUNCH: 'stdout' });
    const { parsed } = await startOAuth(sim);
    expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
    expect(await tcpProbe(parsed.port)).toBe('ECONNREFUSED');
  });

  it('answers requests that arrived during the cold start before exiting on EOF', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_STARTUP_MS: '300' });
    const id = sim.start('initialize', { protocolVersion: 1 });
    expect(await sim.closeStdin()).toEqual({ code: 0, signal: null });
    expect(sim.hasResponse(id)).toBe(true);
  });

  it('dies promptly on SIGTERM; AGY_SIM_IGNORE_SIGTERM=1 ignores it', async () => {
    const plain = new Sim(tmp());
    await plain.request('initialize', { protocolVersion: 1 });
    const t0 = Date.now();
    plain.child.kill('SIGTERM');
    const ex = await plain.exited;
    expect(ex.signal === 'SIGTERM' || ex.code !== null).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1500);

    const stubborn = new Sim(tmp(), { AGY_SIM_IGNORE_SIGTERM: '1' });
    await stubborn.request('initialize', { protocolVersion: 1 });
    stubborn.child.kill('SIGTERM');
    await sleep(400);
    expect(stubborn.exit).toBeUndefined();
    expect((await stubborn.request('initialize', { protocolVersion: 1 })).result).toBeDefined();
    stubborn.kill('SIGKILL');
    expect((await stubborn.exited).signal).toBe('SIGKILL');
  });

  it('AGY_SIM_NOISE=garbage writes non-JSON lines around responses', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_NOISE: 'garbage' });
    await sim.request('initialize', { protocolVersion: 1 });
    await sim.request('session/fly', {});
    const nonJson = sim.rawLines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(nonJson.length).toBeGreaterThanOrEqual(4);
    expect(sim.rawLines.some((l) => l.includes('\x1b'))).toBe(false);
  });

  it('AGY_SIM_NOISE=ansi wraps responses in terminal escapes', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_NOISE: 'ansi' });
    const r = await sim.request('initialize', { protocolVersion: 1 });
    expect(r.result).toEqual(INITIALIZE_RESULT);
    expect(sim.rawLines).toContain('\x1b[?1049h');
    expect(sim.rawLines.some((l) => l.includes('\x1b[2J'))).toBe(true);
    const responseLine = sim.rawLines.find((l) => l.includes('"protocolVersion"'))!;
    expect(responseLine.startsWith('\x1b[?1049l{')).toBe(true);
  });

  it('AGY_SIM_NOISE=both does both', async () => {
    const sim = new Sim(tmp(), { AGY_SIM_NOISE: 'both' });
    await sim.request('initialize', { protocolVersion: 1 });
    expect(sim.rawLines.some((l) => l.startsWith('\x1b[?1049l{'))).toBe(true);
    expect(sim.rawLines.some((l) => !l.includes('\x1b') && !l.startsWith('{"jsonrpc":"2.0","id"'))).toBe(true);
  });
});
