#!/usr/bin/env node
// Thin entry: everything lives in dist/ (built by `npm run build`).
import { main } from '../dist/cli/main.js';

await main();
