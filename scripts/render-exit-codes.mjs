// Writes docs/exit-codes.md from the one exit-code table in src/core/errors.ts (via dist/).
import fs from 'node:fs';
import { renderExitCodesMarkdown } from '../dist/core/exit-codes-doc.js';

fs.writeFileSync(new URL('../docs/exit-codes.md', import.meta.url), renderExitCodesMarkdown());
console.error('wrote docs/exit-codes.md');
