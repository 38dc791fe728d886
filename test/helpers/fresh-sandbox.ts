/** One sandbox per test, for e2e files whose every test starts from an empty HOME. */
import { afterEach, expect } from 'vitest';
import { makeSandbox, type Sandbox, waitNoProcesses } from './cli.js';

/**
 * Returns `fresh(env)`, which makes the test's sandbox. After each test no
 * process of that sandbox may be left (the test fails otherwise); then the
 * sandbox is removed, as every sandbox is (makeSandbox).
 */
export function useFreshSandbox(): (env?: NodeJS.ProcessEnv) => Sandbox {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    if (!sandbox) return;
    const sb = sandbox;
    sandbox = undefined;
    expect(await waitNoProcesses(sb)).toEqual([]);
  });
  return (env = {}) => {
    sandbox = makeSandbox(env);
    return sandbox;
  };
}
