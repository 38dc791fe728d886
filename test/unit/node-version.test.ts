/** One Node.js version claim: package.json's engines is what the shipped simulator launcher says it needs. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

describe('supported Node.js', () => {
  it("engines.node is the launcher's minimum (extensionless ESM)", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const launcher = fs.readFileSync(path.join(ROOT, 'scripts', 'agy-acp-sim'), 'utf8');
    const needed = /Node >= (\d+\.\d+)/.exec(launcher)?.[1];
    expect(needed).toBeDefined();
    expect(pkg.engines.node).toBe(`>=${needed}`);
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { engines?: { node?: string } }>;
    };
    expect(lock.packages['']?.engines?.node).toBe(pkg.engines.node);
  });
});
