import fs from 'node:fs';

let cached: string | undefined;

/** agyctl's own version, from package.json (read once). */
export function agyctlVersion(): string {
  cached ??= (
    JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  ).version;
  return cached;
}
