/**
 * One Node.js version claim, and a true one: package.json's engines starts at
 * what the shipped simulator launcher needs and admits no Node that a
 * production dependency refuses (better-sqlite3 lists its Node lines).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const semver = createRequire(import.meta.url)('semver') as {
  subset(sub: string, dom: string): boolean;
  minVersion(range: string): { version: string } | null;
};

interface Lock {
  packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[] }>;
}

describe('supported Node.js', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as Lock;

  it("engines.node starts at the launcher's minimum (extensionless ESM), as in the lock file", () => {
    const launcher = fs.readFileSync(path.join(ROOT, 'scripts', 'agy-acp-sim'), 'utf8');
    const needed = /Node >= (\d+\.\d+)/.exec(launcher)?.[1];
    expect(needed).toBeDefined();
    expect(semver.minVersion(pkg.engines.node)?.version).toBe(`${needed}.0`);
    expect(lock.packages['']?.engines).toEqual(pkg.engines);
  });

  it('engines.node admits only Node versions every production dependency accepts', () => {
    const refused: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (where === '' || entry.dev || range === undefined) continue;
      if (!semver.subset(pkg.engines.node, range)) refused.push(`${where}: ${range}`);
    }
    expect(refused).toEqual([]);
  });
});
