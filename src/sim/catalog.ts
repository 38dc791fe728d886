// Static payloads copied from the RC01 captures (acp-protocol-reference.md):
// the initialize result, the model/mode catalog and the slash commands.

export const AUTH_METHODS = [
  { description: 'Log in with your Google account', id: 'oauth-personal', name: 'Log in with Google' },
  {
    description: 'Log in with your Gemini Enterprise account',
    id: 'oauth-business',
    name: 'Log in with Gemini Enterprise',
  },
  { description: 'Use an API key with Gemini Developer API', id: 'gemini-api-key', name: 'Gemini API key' },
  {
    description:
      'Use Gemini Enterprise Agent Platform (formerly Vertex AI) with Application Default Credentials or an API key',
    id: 'agent-platform',
    name: 'Gemini Enterprise Agent Platform',
  },
] as const;

export type AuthMethodId = (typeof AUTH_METHODS)[number]['id'];

export function isAuthMethodId(v: string): v is AuthMethodId {
  return AUTH_METHODS.some((m) => m.id === v);
}

/** AGY_SIM_INIT_SHAPE=other: what a later build might answer instead (another name, other ids, fewer capabilities, protocol 2). */
function otherInitializeResult(version: string): Record<string, unknown> {
  return {
    protocolVersion: 2,
    agentCapabilities: { loadSession: false, promptCapabilities: { image: true } },
    authMethods: [{ id: 'google-login', name: 'Log in with Google', description: 'Sign in with a Google account' }],
    agentInfo: { name: 'antigravity', title: 'Google Antigravity', version },
  };
}

export function initializeResult(
  version: string,
  paddingBytes: number,
  shape: 'rc01' | 'other' = 'rc01',
): Record<string, unknown> {
  if (shape === 'other') return otherInitializeResult(version);
  const result: Record<string, unknown> = {
    protocolVersion: 1,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: true, audio: true, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: { list: {}, resume: {} },
      auth: { logout: {} },
    },
    authMethods: AUTH_METHODS.map((m) => ({ ...m })),
    agentInfo: { name: 'antigravity-acp', title: 'Google Antigravity', version },
  };
  // Test aid only (AGY_SIM_HUGE_LINE_BYTES): makes the response one multi-MB line.
  if (paddingBytes > 0) result._meta = { padding: 'x'.repeat(paddingBytes) };
  return result;
}

const MODELS: ReadonlyArray<readonly [id: string, name: string]> = [
  ['gemini-3.8-flash-high', 'Gemini 3.8 Flash (High)'],
  ['gemini-3.8-flash-medium', 'Gemini 3.8 Flash (Medium)'],
  ['gemini-3.8-flash-low', 'Gemini 3.8 Flash (Low)'],
  ['gemini-3.7-flash-high', 'Gemini 3.7 Flash (High)'],
  ['gemini-3.7-flash-medium', 'Gemini 3.7 Flash (Medium)'],
  ['gemini-3.7-flash-low', 'Gemini 3.7 Flash (Low)'],
  ['gemini-3.6-flash-high', 'Gemini 3.6 Flash (High)'],
  ['gemini-3.6-flash-medium', 'Gemini 3.6 Flash (Medium)'],
  ['gemini-3.6-flash-low', 'Gemini 3.6 Flash (Low)'],
  ['gemini-pro-agent', 'Gemini 3.1 Pro (High)'],
  ['gemini-3.1-pro-low', 'Gemini 3.1 Pro (Low)'],
];

const MODES: ReadonlyArray<readonly [id: string, name: string, description: string]> = [
  ['default', 'Default', 'Default permission prompt flow'],
  ['auto_edit', 'Auto Edit', 'Auto-approve file edit tools'],
  ['yolo', 'YOLO', 'Auto-approve all tools'],
];

export const DEFAULT_MODEL = 'gemini-3.7-flash-high';
export const DEFAULT_MODE = 'default';

export const MODEL_IDS: readonly string[] = MODELS.map(([id]) => id);
export const MODE_IDS: readonly string[] = MODES.map(([id]) => id);

/** Per-session settable state; RC01 does not persist it across load/restart. */
export interface SessionConfig {
  model: string;
  mode: string;
}

export function defaultSessionConfig(): SessionConfig {
  return { model: DEFAULT_MODEL, mode: DEFAULT_MODE };
}

export function configOptions(cfg: SessionConfig): unknown[] {
  return [
    {
      currentValue: cfg.model,
      id: 'model',
      name: 'Model',
      category: 'model',
      type: 'select',
      options: MODELS.map(([id, name]) => ({ value: id, name, description: id })),
    },
    {
      currentValue: cfg.mode,
      id: 'mode',
      name: 'Session Mode',
      category: 'mode',
      type: 'select',
      options: MODES.map(([id, name, description]) => ({ value: id, name, description })),
    },
  ];
}

/** The body shared by session/new (plus sessionId) and session/load. */
export function sessionStateResult(cfg: SessionConfig): Record<string, unknown> {
  return {
    modes: {
      currentModeId: cfg.mode,
      availableModes: MODES.map(([id, name, description]) => ({ id, name, description })),
    },
    models: {
      availableModels: MODELS.map(([id, name]) => ({ modelId: id, name, description: id })),
      currentModelId: cfg.model,
    },
    configOptions: configOptions(cfg),
  };
}

export const AVAILABLE_COMMANDS = [
  {
    name: 'plan',
    description:
      'Plan carefully before executing a task (generates an implementation plan artifact and awaits user approval).',
  },
  { name: 'logout', description: 'Log out and clear stored credentials.' },
];

export function availableCommandsUpdate(): Record<string, unknown> {
  return { availableCommands: AVAILABLE_COMMANDS, sessionUpdate: 'available_commands_update' };
}
