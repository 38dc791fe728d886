/** `probe --sign-in`: the command's wiring around src/probe/sign-in.ts (server start options, method choice, output). */
import fs from 'node:fs';
import { makeProbeCwd } from '../../../acp/protocol.js';
import { EXIT, usageError } from '../../../core/errors.js';
import { describeCandidate } from '../../../login/capture/evidence.js';
import type { ProbeOptions } from '../../../probe/probe.js';
import { probeSignIn } from '../../../probe/sign-in.js';
import { signInProbeCleanup } from '../../../profiles/cleanup.js';
import { profileOf } from '../../../profiles/index.js';
import { serverStartOptions } from '../../../profiles/server-start.js';
import { configuredMethod, readProfileSettings } from '../../../settings/profile-auth.js';
import type { CommandResult, HandlerIO } from '../../action.js';
import { renderSignInProbe } from './sign-in-render.js';

type SignInProbeOptions = Extract<ProbeOptions, { run: 'sign-in' }>;

/** --method when it is a browser method; else the one settings.json names (profiles that follow it), else the profile's default. */
function chooseMethod(io: HandlerIO, requested: string | undefined): string {
  const profile = profileOf(io.opts);
  if (requested !== undefined) {
    if (!profile.browserMethods.includes(requested))
      throw usageError(
        `--method ${requested} does not sign in through a browser, so there is nothing to probe.`,
        `use one of: ${profile.browserMethods.join(', ')}`,
      );
    return requested;
  }
  if (!profile.signInFollowsSettings) return profile.defaultSignInMethod;
  const configured = configuredMethod(profile, readProfileSettings(profile, io.opts.stateDir).data);
  return configured && profile.browserMethods.includes(configured) ? configured : profile.defaultSignInMethod;
}

/** The probe's cwd goes, and whatever the profile's server left in the state dir because of it. */
function cleanUpAfter(io: HandlerIO, cwd: string): () => void {
  const profileCleanup = signInProbeCleanup(profileOf(io.opts), io.opts.stateDir, io.ctx.env);
  return () => {
    fs.rmSync(cwd, { recursive: true, force: true });
    profileCleanup();
  };
}

export async function runSignInProbe(io: HandlerIO, options: SignInProbeOptions): Promise<CommandResult> {
  const profile = profileOf(io.opts);
  const files = profile.files(io.opts.stateDir);
  const cwd = makeProbeCwd(io.ctx.env);
  const report = await probeSignIn({
    cwd,
    afterStop: cleanUpAfter(io, cwd),
    env: io.ctx.env,
    stateDir: io.opts.stateDir,
    settingsFile: files.settings,
    tokenFile: files.token,
    method: chooseMethod(io, options.method),
    timeoutMs: options.timeoutMs,
    fakeDisplay: options.fakeDisplay,
    codeEntry: profile.quirks.codeEntryFallback,
    signal: io.ctx.signal,
    startOptions: (env, onRawOutputLine) =>
      serverStartOptions(io, { env, signingIn: true, initTimeoutMs: options.timeoutMs, onRawOutputLine }),
    onRejected: (c) => io.out.verbose(`not a sign-in URL: ${describeCandidate(c)}`),
  }).finally(() => fs.rmSync(cwd, { recursive: true, force: true }));
  if (!io.opts.json) for (const line of renderSignInProbe(report)) io.out.print(line);
  if (report.settings.rewritten)
    io.out.warn(
      `the server ${report.settings.existedBefore ? 'rewrote' : 'created'} ${report.settings.file} when authenticate was called; agyctl ${report.settings.existedBefore ? 'put the original bytes back' : 'removed it'} (a login with this build will change it)`,
    );
  if (!report.stateDir.unchanged)
    io.out.warn(`the state dir is not as it was: ${[...report.stateDir.left, ...report.stateDir.missing].join(', ')}`);
  return { exit: EXIT.ok, data: { signIn: report } };
}
