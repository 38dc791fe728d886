/** `agyctl completion bash` loads in a real bash and completes from the built program. */
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, makeSandbox, type Sandbox } from '../helpers/cli.js';

let sandbox: Sandbox | undefined;
afterEach(() => {
  sandbox?.cleanup();
  sandbox = undefined;
});

/** COMPREPLY after completing the last word of `words` (COMP_CWORD points at it). */
async function complete(words: string[]): Promise<string[]> {
  sandbox ??= makeSandbox();
  const script = [
    `source <(node ${JSON.stringify(BIN)} completion bash)`,
    `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    '_agyctl',
    `printf '%s\\n' "\${COMPREPLY[@]}"`,
  ].join('\n');
  const r = await execa('bash', ['-c', script], {
    env: sandbox.env,
    extendEnv: false,
    cwd: sandbox.root,
    reject: false,
    timeout: 30_000,
  });
  expect(r.exitCode, String(r.stderr)).toBe(0);
  expect(String(r.stderr)).toBe('');
  return String(r.stdout).split('\n').filter(Boolean);
}

describe('bash completion', () => {
  it('completes `agyctl ba` to backup', async () => {
    expect(await complete(['agyctl', 'ba'])).toEqual(['backup']);
  });

  it('completes subcommands, options, and --profile values, skipping option values', async () => {
    expect(await complete(['agyctl', 'settings', 's'])).toEqual(['show', 'set-auth']);
    expect(await complete(['agyctl', '--profile', ''])).toEqual(['antigravity', 'gemini-cli']);
    expect(await complete(['agyctl', 'backup', '--to', 'verify', 'v'])).toEqual(['verify']);
    expect(await complete(['agyctl', 'backup', 'verify', '--fr'])).toEqual(['--from']);
    expect(await complete(['agyctl', 'probe', '--ti'])).toEqual(['--timeout']);
  });
});
