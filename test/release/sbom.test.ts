/**
 * The release's SBOM, agyctl-<v>.cdx.json: valid against CycloneDX's 1.5 JSON
 * schema (the strict one, from @cyclonedx/cyclonedx-library, offline),
 * listed in SHA256SUMS, naming node, sqlite and better-sqlite3 at the
 * versions the executable itself reports (`agyctl version --json`), and each
 * npm package the executable bundles at its installed version with its
 * license.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Spec, Validation } from '@cyclonedx/cyclonedx-library';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { EXE, makeSandbox, RELEASE_DIR, ROOT } from '../helpers/cli.js';

const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const SBOM = path.join(RELEASE_DIR, `agyctl-${VERSION}.cdx.json`);

interface Component {
  type: string;
  name: string;
  version: string;
  purl?: string;
  licenses?: { expression?: string; license?: { id?: string; name?: string } }[];
}
const bom = (): { specVersion: string; components: Component[] } => JSON.parse(fs.readFileSync(SBOM, 'utf8'));
const byName = (name: string): Component | undefined => bom().components.find((c) => c.name === name);

describe('agyctl-<v>.cdx.json', () => {
  it("is valid CycloneDX 1.5 (the schema's strict variant) and listed in SHA256SUMS", async () => {
    const text = fs.readFileSync(SBOM, 'utf8');
    expect(bom().specVersion).toBe('1.5');
    const errors = await new Validation.JsonStrictValidator(Spec.Version.v1dot5).validate(text);
    expect(errors).toBeNull();
    const sums = fs.readFileSync(path.join(RELEASE_DIR, 'SHA256SUMS'), 'utf8');
    expect(sums).toMatch(new RegExp(`^[0-9a-f]{64}  agyctl-${VERSION.replace(/\./g, '\\.')}\\.cdx\\.json$`, 'm'));
  });

  it('names node, sqlite and better-sqlite3 at the versions `agyctl version --json` reports', async () => {
    const sandbox = makeSandbox();
    const r = await execa(EXE, ['version', '--json'], { env: sandbox.env, reject: false, timeout: 60_000 });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const v = (JSON.parse(String(r.stdout)) as { version: Record<string, string> }).version;
    expect(byName('node')).toMatchObject({ version: v.node });
    expect(byName('sqlite')).toMatchObject({ version: v.sqlite, type: 'library' });
    expect(byName('better-sqlite3')).toMatchObject({ version: v.betterSqlite3, licenses: [{ expression: 'MIT' }] });
  });

  it('lists the bundled npm packages at their installed versions, each with a license', () => {
    const npm = bom().components.filter((c) => c.purl?.startsWith('pkg:npm/'));
    for (const name of ['commander', 'chalk', 'jsonc-parser', 'shell-quote', 'qrcode-terminal', 'execa', 'open']) {
      const installed = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));
      expect(byName(name), name).toMatchObject({ version: installed.version });
    }
    for (const c of npm) {
      expect(c.version, c.name).toMatch(/^\d+\.\d+\.\d+/);
      expect(c.licenses?.length, `${c.name} has a license`).toBeGreaterThan(0);
    }
    // Development-only packages are not in the executable.
    for (const dev of ['vitest', 'esbuild', '@google/gemini-cli', 'typescript'])
      expect(byName(dev), dev).toBeUndefined();
  });
});
