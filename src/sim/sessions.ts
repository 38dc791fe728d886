// session/* methods: new, load, prompt, set_config_option, set_mode, close, list.
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  availableCommandsUpdate,
  configOptions,
  defaultSessionConfig,
  MODE_IDS,
  MODEL_IDS,
  sessionStateResult,
} from './catalog.js';
import { type OpenSession, requireAuth, type SimContext } from './context.js';
import { invalidField, sessionNotFound } from './errors.js';
import { optionalString, requireArray, requireString } from './params.js';
import { replayedHistory, rewriteCredentials } from './proof-switches.js';
import { promptText, replyFor, splitIntoChunks } from './reply.js';
import { type Params, WithFollowUp } from './rpc.js';
import { ConversationDb, listConversations, writePlan } from './store.js';

const FILLER_BYTES = 20 * 1024;

function update(ctx: SimContext, sessionId: string, body: Record<string, unknown>): void {
  ctx.rpc.notify('session/update', { sessionId, update: body });
}

function textChunk(kind: 'agent_message_chunk' | 'user_message_chunk', text: string): Record<string, unknown> {
  return { content: { text, type: 'text' }, sessionUpdate: kind };
}

function openSession(ctx: SimContext, id: string, cwd: string, db: ConversationDb): OpenSession {
  const session: OpenSession = { id, cwd, db, config: defaultSessionConfig(), fillerTimer: undefined };
  if (ctx.config.writeIntervalMs !== undefined) {
    // Background commits while the session is open: backup-under-load tests.
    session.fillerTimer = setInterval(() => db.appendFiller(FILLER_BYTES), ctx.config.writeIntervalMs);
  }
  ctx.sessions.set(id, session);
  return session;
}

function closeSession(ctx: SimContext, session: OpenSession): void {
  if (session.fillerTimer) clearInterval(session.fillerTimer);
  session.db.close();
  ctx.sessions.delete(session.id);
}

function getSession(ctx: SimContext, p: Params): OpenSession {
  const id = requireString(p, 'sessionId');
  const session = ctx.sessions.get(id);
  if (!session) throw sessionNotFound(id);
  return session;
}

function newSession(ctx: SimContext, p: Params): WithFollowUp {
  const cwd = requireString(p, 'cwd');
  requireArray(p, 'mcpServers'); // accepted, never contacted (RC01 connects lazily)
  requireAuth(ctx);
  const dbId = randomUUID();
  // A hostile build may answer with any id (AGY_SIM_SESSION_ID); its files still live under the UUID.
  const id = ctx.config.sessionIdOverride ?? dbId;
  const session = openSession(ctx, id, cwd, ConversationDb.create(ctx.paths, dbId, cwd, ctx.config.proofs.tables));
  return new WithFollowUp({ sessionId: id, ...sessionStateResult(session.config) }, () =>
    update(ctx, id, availableCommandsUpdate()),
  );
}

/** RC01 replays a message as one full-text chunk; AGY_SIM_REPLAY_SHAPE=chunked sends it in two. */
function replayMessage(
  ctx: SimContext,
  id: string,
  kind: 'agent_message_chunk' | 'user_message_chunk',
  text: string,
): void {
  const cut = ctx.config.shapes.replayShape === 'chunked' ? Math.ceil(text.length / 2) : text.length;
  for (const piece of cut < text.length ? [text.slice(0, cut), text.slice(cut)] : [text])
    update(ctx, id, textChunk(kind, piece));
}

/** Replays history as FULL-text user/agent pairs, then the commands; config resets to defaults. */
function loadSession(ctx: SimContext, p: Params): Record<string, unknown> {
  const id = requireString(p, 'sessionId');
  const cwd = requireString(p, 'cwd');
  requireArray(p, 'mcpServers');
  requireAuth(ctx);
  if (ctx.config.forgetSessions) throw sessionNotFound(id);
  let session = ctx.sessions.get(id);
  if (session) {
    session.config = defaultSessionConfig();
  } else {
    const db = ConversationDb.open(ctx.paths, id);
    if (!db) throw sessionNotFound(id);
    session = openSession(ctx, id, cwd, db);
  }
  for (const turn of replayedHistory(ctx.config.proofs, session.db.history())) {
    replayMessage(ctx, id, 'user_message_chunk', turn.user);
    if (turn.agent !== undefined && ctx.config.shapes.replayShape !== 'user-only')
      replayMessage(ctx, id, 'agent_message_chunk', turn.agent);
  }
  update(ctx, id, availableCommandsUpdate());
  rewriteCredentials(ctx.config.proofs, ctx.paths);
  return sessionStateResult(session.config);
}

/** As the real server does it (the reference's session/request_permission row): the tool_call, then the agent-to-client permission REQUEST, then its outcome. */
async function askPermission(ctx: SimContext, session: OpenSession): Promise<void> {
  const toolCallId = randomBytes(16).toString('hex');
  const path = join(session.cwd, 'sim-permission-probe.txt');
  const newText = 'written by agy-acp-sim\n';
  const toolCall = {
    toolCallId,
    title: 'Run create_file?',
    kind: 'edit',
    status: 'pending',
    content: [{ type: 'diff', path, newText, _meta: { kind: 'add' } }],
    locations: [{ path }],
    rawInput: { file_path: path, content: newText },
  };
  update(ctx, session.id, { ...toolCall, sessionUpdate: 'tool_call' });
  let allowed = false;
  try {
    const answer = (await ctx.rpc.request('session/request_permission', {
      sessionId: session.id,
      toolCall,
      options: [
        { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
        { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
      ],
    })) as { outcome?: { outcome?: unknown; optionId?: unknown } } | null;
    allowed = answer?.outcome?.outcome === 'selected' && answer.outcome.optionId === 'allow';
  } catch {
    allowed = false; // an error answer counts as a refusal
  }
  update(ctx, session.id, {
    toolCallId,
    status: allowed ? 'completed' : 'failed',
    rawOutput: allowed ? 'Call create_file' : 'Permission denied by the user.',
    sessionUpdate: 'tool_call_update',
  });
}

function streamReply(ctx: SimContext, session: OpenSession, text: string): { stopReason: string } {
  writePlan(ctx.paths, session.id, text);
  const reply = replyFor(text);
  for (const piece of splitIntoChunks(reply)) update(ctx, session.id, textChunk('agent_message_chunk', piece));
  // The session may have been closed while waiting for permission.
  if (ctx.sessions.get(session.id) === session) session.db.appendTurn(text, reply, session.config.model);
  return { stopReason: 'end_turn' };
}

function prompt(ctx: SimContext, p: Params): { stopReason: string } | Promise<{ stopReason: string }> {
  const session = getSession(ctx, p);
  const text = promptText(requireArray(p, 'prompt'));
  requireAuth(ctx);
  // Only the "default" mode prompts; auto_edit/yolo auto-approve the edit.
  if (ctx.config.permissionPrompt && session.config.mode === 'default') {
    return askPermission(ctx, session).then(() => streamReply(ctx, session, text));
  }
  return streamReply(ctx, session, text);
}

function setConfigOption(ctx: SimContext, p: Params): { configOptions: unknown[] } {
  const session = getSession(ctx, p);
  const configId = requireString(p, 'configId');
  const value = requireString(p, 'value');
  if (configId === 'model') {
    if (!MODEL_IDS.includes(value)) throw invalidField('value', `unknown model '${value}'`);
    session.config.model = value;
  } else if (configId === 'mode') {
    if (!MODE_IDS.includes(value)) throw invalidField('value', `unknown mode '${value}'`);
    session.config.mode = value;
  } else {
    throw invalidField('configId', `unknown config option '${configId}'; expected one of: model, mode`);
  }
  return { configOptions: configOptions(session.config) };
}

function setMode(ctx: SimContext, p: Params): Record<string, never> {
  const session = getSession(ctx, p);
  const modeId = requireString(p, 'modeId');
  if (!MODE_IDS.includes(modeId)) throw invalidField('modeId', `unknown mode '${modeId}'`);
  session.config.mode = modeId;
  return {};
}

function close(ctx: SimContext, p: Params): Record<string, never> {
  closeSession(ctx, getSession(ctx, p));
  return {};
}

function list(ctx: SimContext, p: Params): { sessions: unknown[] } {
  const cwd = optionalString(p, 'cwd');
  const sessions = listConversations(ctx.paths).filter((s) => cwd === undefined || s.cwd === cwd);
  return { sessions };
}

export function registerSessionMethods(ctx: SimContext): void {
  ctx.rpc.on('session/new', (p) => newSession(ctx, p));
  ctx.rpc.on('session/load', (p) => loadSession(ctx, p));
  ctx.rpc.on('session/prompt', (p) => prompt(ctx, p));
  ctx.rpc.on('session/set_config_option', (p) => setConfigOption(ctx, p));
  ctx.rpc.on('session/set_mode', (p) => setMode(ctx, p));
  ctx.rpc.on('session/close', (p) => close(ctx, p));
  ctx.rpc.on('session/list', (p) => list(ctx, p));
  // session/cancel: RC01 has no such REQUEST (-32601 from the dispatcher);
  // as a notification it is accepted and changes nothing.
  ctx.rpc.onNotification('session/cancel', () => {});
}

/** Stops background writers; closes (and so checkpoints) the DBs only when asked. */
export function shutdownSessions(ctx: SimContext, closeDbs: boolean): void {
  for (const session of [...ctx.sessions.values()]) {
    if (session.fillerTimer) clearInterval(session.fillerTimer);
    if (closeDbs) closeSession(ctx, session);
  }
}
