/** The repository's root directory, which the tests read files from and run bin/, dist/ and scripts/ in. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
