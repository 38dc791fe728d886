/** `agyctl sessions`: every conversation in the state dir, from the file system and /proc only. */
import { discoverSessions, noConversationsDirectory, noConversationsYet, type SessionInfo } from './discover.js';

export interface SessionsReport {
  stateDir: string;
  sessions: Array<Omit<SessionInfo, 'db' | 'wal' | 'readable'>>;
}

export async function listSessionsReport(stateDir: string): Promise<SessionsReport> {
  if (noConversationsYet(stateDir)) return { stateDir, sessions: [] };
  const found = discoverSessions(stateDir);
  if (found === undefined) throw noConversationsDirectory(stateDir);
  return { stateDir, sessions: found.map(({ db: _db, wal: _wal, readable: _r, ...rest }) => rest) };
}
