// `agy-acp-sim --seed-conversations`: conversations with history, for trying
// backup, --prove and sessions export by hand. Each turn is stored as a
// prompt through the sim stores it (same tables, same reply, a /plan's
// plan in the brain dir), and each database is closed, so it is
// checkpointed and needs no running sim.
import { randomUUID } from 'node:crypto';
import { defaultSessionConfig } from './catalog.js';
import type { SimConfig } from './config.js';
import type { StatePaths } from './paths.js';
import { replyFor } from './reply.js';
import { ConversationDb, writePlan } from './store.js';

/** Three conversations of three or four turns each. */
export const SEED_CONVERSATIONS: ReadonlyArray<{ cwd: string; prompts: string[] }> = [
  {
    cwd: '/srv/app',
    prompts: [
      '/plan add a health endpoint to the service',
      'Reply with exactly: PLAN ACCEPTED. Do not use any tools.',
      'Write the handler for GET /healthz',
      'Add a test for it',
    ],
  },
  {
    cwd: '/srv/app',
    prompts: ['Why does the nightly job fail on Sundays?', 'Show me the cron line', 'Fix the day-of-week field'],
  },
  {
    cwd: '/home/ops/notes',
    prompts: ["Summarise yesterday's incident in three lines", 'Reply with exactly: DONE. Thanks.', 'Now as a haiku'],
  },
];

/** Writes the seed conversations into the state dir; returns their ids. */
export function seedConversations(paths: StatePaths, config: SimConfig): string[] {
  const model = defaultSessionConfig().model;
  return SEED_CONVERSATIONS.map((seed) => {
    const id = randomUUID();
    const db = ConversationDb.create(paths, id, seed.cwd, config.proofs.tables);
    for (const prompt of seed.prompts) {
      writePlan(paths, id, prompt);
      db.appendTurn(prompt, replyFor(prompt), model);
    }
    db.close();
    return id;
  });
}
