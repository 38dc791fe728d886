/**
 * The signed release: release/ is built with `--sign-key` (a throwaway key,
 * test/helpers/release-build.ts), and docs/install.md's verify steps, run as
 * written in a directory holding the release files, accept it; the only
 * change is the key in allowed_signers (the doc's is the project's release
 * key, which must be docs/release-key.pub). A SHA256SUMS changed after
 * signing is refused by the same steps.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELEASE_DIR, ROOT } from '../helpers/cli.js';
import { TEST_SIGN_KEY } from '../helpers/release-build.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-verify-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const PROJECT_KEY = fs.readFileSync(path.join(ROOT, 'docs', 'release-key.pub'), 'utf8').trim();

/** docs/install.md's shell block that verifies the signature. */
function verifySteps(): string {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'install.md'), 'utf8');
  const block = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('-Y verify'));
  if (!block) throw new Error('docs/install.md has no sh block with ssh-keygen -Y verify');
  return block;
}

/** A directory like a user's download: links to each release file. */
function downloaded(name: string): string {
  const where = path.join(dir, name);
  fs.mkdirSync(where);
  for (const file of fs.readdirSync(RELEASE_DIR)) fs.symlinkSync(path.join(RELEASE_DIR, file), path.join(where, file));
  return where;
}

async function runSteps(cwd: string) {
  const steps = verifySteps().replace(PROJECT_KEY, fs.readFileSync(`${TEST_SIGN_KEY}.pub`, 'utf8').trim());
  const r = await execa('sh', ['-euc', steps], { cwd, reject: false, timeout: 120_000, all: true });
  return { exitCode: r.exitCode, all: String(r.all) };
}

describe("docs/install.md's verify steps", () => {
  it('name the project key, docs/release-key.pub, as release@agyctl in namespace agyctl-release', () => {
    expect(PROJECT_KEY).toMatch(/^ssh-ed25519 \S+ release@agyctl$/);
    expect(verifySteps()).toContain(`release@agyctl namespaces="agyctl-release" ${PROJECT_KEY}\n`);
  });

  it('accept the release as built with --sign-key: a good signature, then every file OK', async () => {
    const r = await runSteps(downloaded('good'));
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('Good "agyctl-release" signature for release@agyctl');
    const listed = fs.readFileSync(path.join(RELEASE_DIR, 'SHA256SUMS'), 'utf8').trim().split('\n');
    expect(listed.length).toBeGreaterThanOrEqual(5);
    for (const line of listed) expect(r.all).toContain(`${line.slice(66)}: OK`);
  });

  it('refuse a SHA256SUMS changed after it was signed, before checking any file', async () => {
    const where = downloaded('changed');
    const sums = fs.readFileSync(path.join(where, 'SHA256SUMS'), 'utf8');
    fs.rmSync(path.join(where, 'SHA256SUMS'));
    fs.writeFileSync(
      path.join(where, 'SHA256SUMS'),
      sums.replace(/^[0-9a-f]/, (c) => (c === '0' ? '1' : '0')),
    );
    const r = await runSteps(where);
    expect(r.exitCode, r.all).toBe(255);
    expect(r.all).not.toContain(': OK');
  });
});
