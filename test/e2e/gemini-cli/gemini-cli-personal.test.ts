/**
 * gemini-cli and a personal Google account since 2026-06-18: the browser step
 * succeeds, then Code Assist answers with the free tier ineligible
 * (`reasonCode: UNSUPPORTED_CLIENT`). Played by the fake Google's
 * `unsupported-client` switch against the REAL gemini-cli; the stderr path
 * by a server script that prints gemini-cli's message and exits.
 *
 * @module-tag gemini-cli
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PERSONAL_ACCOUNT_SENTENCE } from '../../../src/acp/account-refusal.js';
import { httpGet, redirectFor, waitForEvent } from '../../helpers/browser.js';
import { agyctl, parseEvents, parseJson, ROOT, spawnAgyctl, waitNoProcesses } from '../../helpers/cli.js';
import { FAKE, UNSUPPORTED_CLIENT_MESSAGE, useFakeGoogle } from '../../helpers/fake-google.js';
import { type GeminiSandbox, makeGeminiSandbox } from '../../helpers/gemini.js';

const google = useFakeGoogle();
let sandbox: GeminiSandbox | undefined;

afterEach(() => {
  google().codeAssist = 'ok';
});

function onlineSandbox(): GeminiSandbox {
  return makeGeminiSandbox({ HTTPS_PROXY: google().proxyUrl, NODE_EXTRA_CA_CERTS: google().caFile });
}

async function loginPlayingBrowser(sb: GeminiSandbox) {
  const child = spawnAgyctl(['login', '--json', '--profile', 'gemini-cli', '--timeout', '90s'], sb, {
    timeoutMs: 120_000,
  });
  const url = await waitForEvent(child, 'url', 60_000);
  await httpGet(redirectFor(String(url.url), { code: FAKE.code }));
  const result = await child;
  child.stdin?.destroy();
  return { exitCode: result.exitCode, events: parseEvents(String(result.stdout)), stderr: String(result.stderr) };
}

interface LiveCheck {
  id: string;
  ok: boolean;
  code?: string;
  message: string;
}

describe('gemini-cli refuses personal accounts (UNSUPPORTED_CLIENT)', () => {
  it('login: after the browser step, exit 3, code personal-account-unsupported and the one sentence', async () => {
    sandbox = onlineSandbox();
    google().codeAssist = 'unsupported-client';
    const run = await loginPlayingBrowser(sandbox);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.events.at(-1)).toMatchObject({
      event: 'error',
      code: 'personal-account-unsupported',
      exit: 3,
      message: PERSONAL_ACCOUNT_SENTENCE,
    });
    expect(String(run.events.at(-1)?.hint)).toContain('GOOGLE_CLOUD_PROJECT');
    expect(await waitNoProcesses(sandbox, 10_000)).toEqual([]);
    // The docs' first example: a Workspace account with its project still signs in.
    sandbox = makeGeminiSandbox({
      HTTPS_PROXY: google().proxyUrl,
      NODE_EXTRA_CA_CERTS: google().caFile,
      GOOGLE_CLOUD_PROJECT: FAKE.project,
    });
    const workspace = await loginPlayingBrowser(sandbox);
    expect(workspace.exitCode, workspace.stderr).toBe(0);
    const check = await agyctl(['check', '--live', '--json', '--profile', 'gemini-cli'], sandbox, {
      timeoutMs: 90_000,
    });
    expect(check.exitCode, check.stdout).toBe(0);
    expect(await waitNoProcesses(sandbox, 10_000)).toEqual([]);
  }, 240_000);

  it('check --live with cached credentials: exit 3 (not a server error), the live check carries the code and the sentence', async () => {
    sandbox = onlineSandbox();
    expect((await loginPlayingBrowser(sandbox)).exitCode).toBe(0);
    google().codeAssist = 'unsupported-client';
    const check = await agyctl(['check', '--live', '--json', '--profile', 'gemini-cli'], sandbox, {
      timeoutMs: 90_000,
    });
    expect(check.exitCode, check.stdout).toBe(3);
    const doc = parseJson(check.stdout);
    expect(doc.status).toBe('not-authenticated');
    const live = (doc.checks as LiveCheck[]).find((c) => c.id === 'live');
    expect(live).toMatchObject({ ok: false, code: 'personal-account-unsupported' });
    expect(live?.message).toContain(PERSONAL_ACCOUNT_SENTENCE);
    expect(await waitNoProcesses(sandbox, 10_000)).toEqual([]);
  }, 180_000);

  it("a server that prints Google's refusal on stderr and exits: exit 3 with the sentence, not a server error", async () => {
    sandbox = makeGeminiSandbox();
    const script = path.join(sandbox.root, 'gemini');
    fs.writeFileSync(
      script,
      `#!/bin/sh\necho 'Error authenticating: IneligibleTierError: ${UNSUPPORTED_CLIENT_MESSAGE}' >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const check = await agyctl(['check', '--live', '--json', '--profile', 'gemini-cli', '--server', script], sandbox);
    expect(check.exitCode, check.stdout).toBe(3);
    const live = (parseJson(check.stdout).checks as LiveCheck[]).find((c) => c.id === 'live');
    expect(live).toMatchObject({ ok: false, code: 'personal-account-unsupported' });
    const login = await agyctl(['login', '--json', '--profile', 'gemini-cli', '--server', script], sandbox);
    expect(login.exitCode, login.stdout).toBe(3);
    expect(parseEvents(login.stdout).at(-1)).toMatchObject({ code: 'personal-account-unsupported', exit: 3 });
  }, 180_000);

  it('docs/gemini-cli.md carries the same sentence, and its API-key example signs in (exit 0)', async () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'gemini-cli.md'), 'utf8').replace(/\s+/g, ' ');
    expect(doc).toContain(PERSONAL_ACCOUNT_SENTENCE);
    expect(doc).toContain('agyctl --profile gemini-cli login --method gemini-api-key');
    sandbox = makeGeminiSandbox({
      HTTPS_PROXY: google().proxyUrl,
      NODE_EXTRA_CA_CERTS: google().caFile,
      GEMINI_API_KEY: 'fake-gemini-api-key-for-agyctl-tests',
    });
    const run = await agyctl(['login', '--json', '--profile', 'gemini-cli', '--method', 'gemini-api-key'], sandbox, {
      timeoutMs: 90_000,
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(await waitNoProcesses(sandbox, 10_000)).toEqual([]);
  }, 180_000);
});
