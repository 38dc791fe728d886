/**
 * A command that only reads the state dir leaves it as it found it: every
 * entry's name, mode, owner, size, mtime (directories too) and sha256, for a
 * conversation database in each state a box shows it in (closed; a WAL left
 * by a killed server, with and without its -shm; held open by a live
 * writer, with a WAL full or truncated), for `sessions`, `check`, `backup`,
 * `backup --prove`, `sessions export` and `probe --assumptions`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agyctl, type Sandbox } from '../../helpers/cli.js';
import { addConversation, authedSandbox } from '../../helpers/sim-conversations.js';
import { changes, listTree } from '../../helpers/state-listing.js';
import { startWriter, type Writer } from '../../helpers/wal-writer.js';

interface Box {
  sandbox: Sandbox;
  id: string;
  writer?: Writer;
}

type DbState = 'closed' | 'wal, no shm' | 'wal and shm' | 'held by a writer' | 'held, WAL truncated';

const STATES: DbState[] = ['closed', 'wal, no shm', 'wal and shm', 'held by a writer', 'held, WAL truncated'];

/** Each command (its output kept outside the state dir), and what its --json says when it read the conversation. */
const COMMANDS: Array<[string, (out: string) => string[], (id: string) => string]> = [
  ['sessions', () => ['sessions', '--json'], (id) => `"id": "${id}"`],
  ['check', () => ['check', '--json'], () => '"id": "conversations"'],
  ['backup', (out) => ['backup', '--to', out, '--json'], (id) => `"id": "${id}"`],
  ['backup --prove', (out) => ['backup', '--prove', '--to', out, '--json'], (id) => `"id": "${id}"`],
  ['sessions export', (out) => ['sessions', 'export', '--out', out, '--json'], (id) => `${id}.md`],
  ['probe --assumptions', () => ['probe', '--assumptions', '--json'], (id) => `"loadedSession": "${id}"`],
];

/**
 * A signed-in box with one simulator conversation (and its brain file) in `state`. The writer
 * (test/fixtures/wal-writer.mjs) adds rows the simulator does not replay,
 * and is either left running idle or killed without closing the database.
 */
async function boxWith(state: DbState): Promise<Box> {
  const sandbox = authedSandbox();
  const id = addConversation(sandbox, 2, '/work/sim');
  const brain = path.join(sandbox.stateDir, 'brain', id);
  fs.mkdirSync(brain, { recursive: true });
  fs.writeFileSync(path.join(brain, 'implementation_plan.md'), '# plan\n');
  if (state === 'closed') return { sandbox, id };
  const db = path.join(sandbox.stateDir, 'conversations', `${id}.db`);
  const args = ['--initial-rows', '3', '--interval-ms', '600000'];
  const writer = await startWriter(db, state === 'held, WAL truncated' ? [...args, '--checkpoint-initial'] : args);
  if (state.startsWith('held')) return { sandbox, id, writer };
  await writer.stop(); // like a killed server: the WAL and the -shm stay
  if (state === 'wal, no shm') fs.rmSync(`${db}-shm`);
  return { sandbox, id };
}

describe.each(STATES)('a conversation database %s', (state) => {
  // A fresh box for each command: a reader's mark left in a live -shm by one would hide the next one's.
  let box: Box;
  beforeEach(async () => {
    box = await boxWith(state);
  });
  afterEach(async () => {
    await box.writer?.stop();
  });

  it.each(COMMANDS)('%s changes nothing in the state dir', async (_name, argv, readIt) => {
    const out = path.join(box.sandbox.root, 'out');
    fs.mkdirSync(out);
    const before = listTree(box.sandbox.stateDir);
    const r = await agyctl(argv(out), box.sandbox);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(readIt(box.id));
    expect(r.stderr).not.toMatch(/another process/);
    expect(changes(before, listTree(box.sandbox.stateDir))).toEqual([]);
  });
});
