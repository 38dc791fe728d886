/** One sandbox per test, for e2e files whose every test starts from an empty HOME. */
import { afterEach, expect } from 'vitest';
import { makeSandbox, type Sandbox, waitNoProcesses } from './cli.js';

/**
 * Returns `fresh(env)`, which makes the test's sandbox. After each test no
 * process of that sandbox may be left (the test fails otherwise), and the
 * sandbox is removed.
 */
export function useFreshSandbox(): (env?: NodeJS.ProcessEnv) => Sandbox {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    if (!sandbox) return;
    const sb = sandbox;
    sandbox = undefined;
    try {
      expect(await waitNoProcesses(sb)).toEqual([]);
    } finally {
      sb.cleanup();
    }
  });
  return (env = {}) => {
    sandbox = makeSandbox(env);
    return sandbox;
  };
}
