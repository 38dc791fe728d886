/**
 * A throwaway session that proves credentials work the way the next start
 * will see them: session/new in an empty temporary directory, then
 * session/close. The caller removes its conversation files with
 * removeConversation() once the server has stopped (a live server may still
 * hold the database open).
 */
import fs from 'node:fs';
import path from 'node:path';
import { conversationFiles, tempRoot } from '../core/paths.js';
import { childPath, isUuid } from '../core/safe-path.js';
import type { CallOptions, Connection } from './connection.js';
import { closeSession, currentModel, newSession } from './protocol.js';

export interface ProbeSessionResult {
  sessionId: string;
  model: string | undefined;
  ms: number;
}

export function makeProbeCwd(env: NodeJS.ProcessEnv): string {
  return fs.mkdtempSync(path.join(tempRoot(env), 'agyctl-probe-'));
}

/** Remove a probe conversation's db, WAL, shm and meta files (and the server's brain dir for it). */
export function removeConversation(stateDir: string, sessionId: string): boolean {
  if (!isUuid(sessionId)) return false; // only UUIDs ever become paths (a server answering `..` must not steer an rm -rf)
  const files = conversationFiles(stateDir, sessionId);
  for (const f of [files.db, files.wal, files.shm, files.meta]) fs.rmSync(f, { force: true });
  fs.rmSync(childPath(path.join(stateDir, 'brain'), sessionId), { recursive: true, force: true });
  return !fs.existsSync(files.db);
}

export async function runProbeSession(
  conn: Connection,
  env: NodeJS.ProcessEnv,
  options: CallOptions,
): Promise<ProbeSessionResult> {
  const cwd = makeProbeCwd(env);
  const started = Date.now();
  try {
    const session = await newSession(conn, cwd, options);
    try {
      await closeSession(conn, session.sessionId, options);
    } catch {
      // Older builds may lack session/close; the session is still proven.
    }
    return { sessionId: session.sessionId, model: currentModel(session), ms: Date.now() - started };
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}
