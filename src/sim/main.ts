// agy-acp-sim: a stand-in for Google's antigravity-acp server (build RC01),
// quirks included, for agyctl's tests. See docs/simulator.md.
//
// Startup order matters: AGY_SIM_EXIT_AT_START fires before anything else;
// then flags and env switches are checked (exit 2 on error); then the state
// dir is read ONCE (settings.json is never reread); then stdin is read, but
// requests are served only after the simulated cold start.
//
// The launcher (scripts/agy-acp-sim) is the program's entry point and owns
// how it ends: it passes `exit`, which the crash switch, stdin EOF and
// startup errors need to end the process at once.
import { performance } from 'node:perf_hooks';
import { checkArgs, USAGE, UsageError } from './args.js';
import { registerAuthMethods } from './auth-methods.js';
import { readSettings, startupAuth } from './auth-state.js';
import { initializeResult } from './catalog.js';
import { ConfigError, loadConfig, resolveTokenStore, type SimConfig } from './config.js';
import type { SimContext } from './context.js';
import { advertisesUrlElicitation } from './elicitation.js';
import { missingField } from './errors.js';
import { leakAndDie, leakAtStart } from './leak.js';
import { statePaths } from './paths.js';
import { refuseClientSideMethods, registerAuthStatus, renameForV2, shapeInitialize } from './protocol-v2.js';
import { writeRawLine } from './raw-line.js';
import { LineSplitter, RpcConnection } from './rpc.js';
import { seedConversations } from './seed.js';
import { registerSessionMethods, shutdownSessions } from './sessions.js';

export { useSqliteAddon } from './store.js';

/** Runs the simulator in this process; `exit` ends it (the launcher passes process.exit). */
export function runSimulator(exit: (code: number) => never): void {
  const env = process.env as Record<string, string | undefined>;

  function die(code: number, lines: string[]): never {
    process.stderr.write(lines.map((l) => `${l}\n`).join(''));
    return exit(code);
  }

  const exitAtStart = env.AGY_SIM_EXIT_AT_START;
  if (exitAtStart !== undefined && exitAtStart !== '' && !/^\d+$/.test(exitAtStart)) {
    die(2, [`agy-acp-sim: AGY_SIM_EXIT_AT_START must be a non-negative integer, got '${exitAtStart}'`]);
  }
  if (exitAtStart !== undefined && /^\d+$/.test(exitAtStart)) {
    die(Number(exitAtStart), [
      'error: simulated startup failure',
      'agy_acp_server: could not initialize the language server runtime',
      '(AGY_SIM_EXIT_AT_START is set; the simulator exits before reading stdin)',
    ]);
  }

  let mode: 'serve' | 'seed' = 'serve';
  try {
    mode = checkArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) die(2, [`agy-acp-sim: ${err.message}`, USAGE]);
    throw err;
  }

  function loadConfigOrDie(): SimConfig {
    try {
      return loadConfig(env);
    } catch (err) {
      if (err instanceof ConfigError) die(2, [`agy-acp-sim: ${err.message}`]);
      throw err;
    }
  }
  const config = loadConfigOrDie();
  if (mode === 'seed') seedAndExit(env, config, exit);

  // gemini-cli's launcher ignores SIGTERM; RC01 dies promptly (default action,
  // which also leaves the conversation WALs un-checkpointed, like a real kill).
  if (config.ignoreSigterm) process.on('SIGTERM', () => {});

  // The client went away: nothing left to talk to.
  process.stdout.on('error', () => exit(0));

  const tokenStore = resolveTokenStore(config.tokenStore, env);
  const paths = {
    ...statePaths(env, tokenStore.store, config.shapes.conversationNaming, config.shapes.metaShape),
    tokenWriteFails: tokenStore.writeFails,
  };
  const settings = readSettings(paths.settings, config.settingsComments);
  let stdoutClosed = false;
  const rpc = new RpcConnection(config.noise, (chunk) => {
    if (!stdoutClosed) process.stdout.write(chunk);
  });

  const ctx: SimContext = {
    config,
    env,
    paths,
    settings,
    rpc,
    auth: startupAuth(paths, settings, env, config.tokenRevoked, config.shapes.tokenShape === 'opaque'),
    oauthFlow: undefined,
    clientElicitsUrl: false,
    sessions: new Map(),
    crash() {
      die(70, ['FATAL: simulated crash']);
    },
  };

  rpc.on('initialize', (p) => {
    if (config.leakSecrets === 'init') leakAndDie(die);
    if (p.protocolVersion === undefined) throw missingField('protocolVersion');
    ctx.clientElicitsUrl = advertisesUrlElicitation(p.clientCapabilities);
    return shapeInitialize(
      initializeResult(config.version, config.hugeLineBytes, config.shapes.initShape),
      config.protocol,
    );
  });
  registerAuthMethods(ctx);
  registerSessionMethods(ctx);
  if (config.protocol.mode === 'v2') renameForV2(rpc);
  if (config.protocol.methodTypes) refuseClientSideMethods(rpc);
  registerAuthStatus(
    rpc,
    config.protocol,
    () => ctx.auth !== undefined && !ctx.auth.revoked,
    config.elicitation.hostile,
  );
  // --- trust-io: a hostile server's output ---
  leakAtStart(config.leakSecrets, rpc);
  if (config.leakSecrets === 'session') rpc.on('session/new', () => leakAndDie(die));
  if (config.rawLineBytes > 0) writeRawLine(config.rawLineBytes);
  if (config.closeStdout !== 'off') {
    // The protocol channel ends; the process (and whatever the request started) keeps running.
    const method = config.closeStdout;
    const inner = rpc.handlerFor(method);
    rpc.on(method, (p, id) => {
      stdoutClosed = true;
      process.stdout.end();
      return inner?.(p, id);
    });
  }

  // Cold start, measured from process start like the real 1.5 GB binary's.
  const readyDelay = Math.max(0, performance.timeOrigin + config.startupMs - Date.now());
  const ready = new Promise<void>((resolve) =>
    setTimeout(() => {
      rpc.ready();
      resolve();
    }, readyDelay),
  );

  const splitter = new LineSplitter((line) => rpc.handleLine(line));
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => splitter.push(chunk));
  process.stdin.on('end', () => {
    splitter.end();
    // Requests that arrived during the cold start are still answered.
    void ready.then(() => {
      ctx.oauthFlow?.dispose();
      shutdownSessions(ctx, config.checkpointOnExit);
      exit(0);
    });
  });
}

/** `--seed-conversations`: the conversations' ids and where they are, on stdout; nothing is served. */
function seedAndExit(env: Record<string, string | undefined>, config: SimConfig, exit: (code: number) => never): never {
  const paths = statePaths(
    env,
    resolveTokenStore(config.tokenStore, env).store,
    config.shapes.conversationNaming,
    config.shapes.metaShape,
  );
  const ids = seedConversations(paths, config);
  process.stdout.write(`${ids.map((id) => `${id}\n`).join('')}`);
  process.stderr.write(`agy-acp-sim: ${ids.length} conversations with history written to ${paths.conversations}\n`);
  return exit(0);
}
