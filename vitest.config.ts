import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Three projects, by what a test needs (README, Development):
 *   unit  test/unit: in process, from src/, no build (`npm run test:unit`; bench/unit-suite.mjs times it);
 *   sim   test/sim: the simulator's protocol (its global setup builds dist/sim when stale);
 *   e2e   test/e2e (a folder per command): the built binary (`npm run test:e2e`, minutes); refuses a dist/ older than src/.
 *   release  test/release and a set of e2e files, against the single executable and the .deb
 *         (`npm run test:release`; builds release/ once per run when it is older than src/ and the
 *         other files the release script reads).
 * Tags (a `@module-tag` line in a file's header) mark what a file needs from the
 * machine: `root` (root, network namespaces, OpenSSH), `gemini-cli` (the real
 * gemini-cli dev dependency), `ansible` (Debian's ansible-core). Leave them
 * out with e.g. `npx vitest run --project e2e --tags-filter='!root'`.
 */
/** The e2e files that exercise installed behaviour, run a second time against the single executable (paths under test/e2e/). */
const EXECUTABLE_E2E = [
  'cli/cli',
  'check/check',
  'settings/settings',
  'backup/backup',
  'login/login-detach',
  'backup/restore-archive-signal',
  'sessions/sessions-export',
  'root/root-owner-child',
  'root/root-reads-roots-own',
];

/**
 * vitest's order, except that within a group the longest files (by the last run's durations) start first
 * whatever their project: by default each project's files wait for the previous project's, and the
 * release files, a minute of work, would run last, after every worker but theirs has gone idle.
 * Files without a duration (new ones) start first, as vitest's own order has it.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const duration = (spec: TestSpecification): number =>
      this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`)
        ?.duration ?? Number.POSITIVE_INFINITY;
    const group = (spec: TestSpecification): number => spec.project.config.sequence.groupOrder;
    return sorted
      .map((spec, at) => ({ spec, at, group: group(spec), duration: duration(spec) }))
      .sort((a, b) => a.group - b.group || (b.duration === a.duration ? 0 : b.duration - a.duration) || a.at - b.at)
      .map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    // e2e tests spawn the built binary and the simulator; give them room but keep a bound.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The sim, e2e and release files run three at a time: most of their time is spent waiting on
    // the processes they start (servers, sshd, ansible, gemini-cli), so even two cores stay busy.
    // Each file's namespaces, users, ports and temp dirs are its own (names carry the worker's pid
    // or a random tag; ports are 0). AGYCTL_TEST_WORKERS=1 runs them one at a time again (vitest's
    // --maxWorkers does not reach a project's own setting).
    maxWorkers: Number(process.env.AGYCTL_TEST_WORKERS) || 3,
    sequence: { sequencer: LongestFirst },
    reporters: ['default'],
    tags: [
      { name: 'root', description: 'needs root: network namespaces, sshd, files owned by another user' },
      { name: 'gemini-cli', description: 'runs the real gemini-cli (the pinned dev dependency)' },
      { name: 'ansible', description: "runs Debian's ansible-core and ansible-doc" },
    ],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Unit files share one module graph per worker instead of re-importing src/ for each of
          // ~40 files: none mocks modules, and each restores what it changes (umask, fake timers).
          isolate: false,
          // At least two workers even on two cores: many unit tests wait on a child (a WAL writer,
          // ansible-inventory) and leave the CPU idle. A maxWorkers of its own needs a groupOrder of
          // its own: the unit files run first, then sim and e2e as before.
          maxWorkers: Math.max(2, availableParallelism() - 1),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'sim',
          include: ['test/sim/**/*.test.ts'],
          globalSetup: ['test/helpers/fresh-sim.ts'],
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/helpers/fresh-dist.ts'],
          sequence: { groupOrder: 1 },
        },
      },
      {
        // The release files (built once per run): test/release/, and these e2e files again, run against the
        // single executable instead of `node bin/agyctl.js` (test/helpers/cli.ts, RUNTIME; README, Tests).
        extends: true,
        test: {
          name: 'release',
          include: ['test/release/**/*.test.ts', ...EXECUTABLE_E2E.map((name) => `test/e2e/${name}.test.ts`)],
          env: { AGYCTL_TEST_RUNTIME: 'executable' },
          globalSetup: ['test/helpers/release-build.ts'],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
