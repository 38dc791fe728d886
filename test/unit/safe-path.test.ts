/** Paths from outside data: only UUIDs, only children of their directory, so a server answering `..` cannot steer a delete. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeConversation } from '../../src/acp/protocol.js';
import { discoverSessions } from '../../src/backup/discover.js';
import { conversationFiles } from '../../src/core/paths.js';
import { childPath, isUuid, UnsafePathError } from '../../src/core/safe-path.js';

describe('safe paths', () => {
  it('accepts UUIDs only', () => {
    expect(isUuid('4d5a6c89-0be5-4d98-ac4d-dede75c780fe')).toBe(true);
    for (const bad of ['..', '.', '', '../x', '4d5a6c89-0be5-4d98-ac4d-dede75c780fe/..', 'a'.repeat(36)])
      expect(isUuid(bad)).toBe(false);
  });

  it('childPath refuses anything that is not a plain name inside the directory', () => {
    expect(childPath('/s/conversations', 'x.db')).toBe('/s/conversations/x.db');
    for (const bad of ['', '.', '..', '../x', 'a/b', 'a\0b', '/etc/passwd'])
      expect(() => childPath('/s/conversations', bad), bad).toThrow(UnsafePathError);
    expect(() => conversationFiles('/s', '../../etc/x')).toThrow(UnsafePathError);
  });

  it('removeConversation never deletes outside conversations/ and brain/<uuid>', () => {
    const state = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-safe-'));
    try {
      fs.mkdirSync(path.join(state, 'brain', 'keep'), { recursive: true });
      fs.writeFileSync(path.join(state, 'acp_token.json'), '{}');
      for (const id of ['..', '.', '../brain', 'keep']) expect(removeConversation(state, id)).toBe(false);
      expect(fs.existsSync(path.join(state, 'acp_token.json'))).toBe(true);
      expect(fs.existsSync(path.join(state, 'brain', 'keep'))).toBe(true);
    } finally {
      fs.rmSync(state, { recursive: true, force: true });
    }
  });

  it('a listing entry named `..db` is described from its own file, never from a path outside conversations/', () => {
    const state = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-safe-'));
    try {
      fs.mkdirSync(path.join(state, 'conversations'));
      fs.writeFileSync(path.join(state, 'conversations', '..db'), 'x'); // stem "."
      fs.writeFileSync(path.join(state, 'conversations.db'), 'outside the conversations dir');
      const [entry] = discoverSessions(state)!;
      expect(entry).toMatchObject({ id: '.', readable: false, dbBytes: 1 });
      expect(entry!.problem).toContain('not named like a session id');
    } finally {
      fs.rmSync(state, { recursive: true, force: true });
    }
  });
});
