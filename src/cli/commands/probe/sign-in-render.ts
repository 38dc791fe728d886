/** Human lines for `agyctl probe --sign-in`: what a bug report about a new server build needs, nothing secret. */
import { describeCandidate } from '../../../login/capture/evidence.js';
import { FILE_KIND_WORDS } from '../../../login/capture/launcher-source.js';
import { renderAnatomy } from '../../../login/url-anatomy.js';
import type { SignInProbeReport } from '../../../probe/sign-in.js';

function channelLine(r: SignInProbeReport): string {
  if (r.channel === null)
    return 'channel:      none: authenticate succeeded without a sign-in URL (credentials from the environment?)';
  const launcher = `${r.launcher?.program ?? '?'} ${(r.launcher?.args ?? []).join(' ')}`.trimEnd();
  const how =
    r.channel === 'shim'
      ? `a launcher: ${launcher}`
      : r.channel === 'launcher-file'
        ? `a launcher was handed ${r.launcher?.file ? FILE_KIND_WORDS[r.launcher.file.kind] : 'a file'} that leads to the URL: ${launcher}`
        : r.channel === 'rpc'
          ? `a JSON-RPC message: ${r.message ?? '?'}`
          : r.channel === 'elicitation'
            ? `ACP URL elicitation ${r.elicitation?.id ?? '?'} tied to authenticate, answered ${r.elicitation?.answer ?? 'cancel'}`
            : `a line on the server's ${r.channel}`;
  return `channel:      ${r.channel} (${how})`;
}

function settingsLine(s: SignInProbeReport['settings']): string {
  if (!s.rewritten) return `${s.file} unchanged`;
  return s.existedBefore
    ? `the server rewrote ${s.file}; its original bytes were put back`
    : `the server created ${s.file}; it was removed again`;
}

export function renderSignInProbe(r: SignInProbeReport): string[] {
  const lines = [
    `server:       ${r.server} (pid ${r.pid})${r.agent ? `, ${r.agent.name ?? '?'} ${r.agent.version ?? ''}`.trimEnd() : ''}`,
    `method:       ${r.startupSignIn ? 'none called: the server started a sign-in before answering initialize' : r.method}`,
    channelLine(r),
  ];
  if (r.elicitation) lines.push(`message:      "${r.elicitation.message}"`);
  if (r.url) lines.push(...renderAnatomy(r.url));
  if (r.kind === 'code-entry')
    lines.push('sign-in kind: code entry (the user pastes a code the server reads on stdin)');
  if (r.kind === 'device')
    lines.push('sign-in kind: a device-code or verification page the server follows itself (no tunnel, no paste)');
  if (r.listener) lines.push(`listener:     127.0.0.1:${r.listener.port}, never contacted; closed with the server`);
  lines.push(`settings:     ${settingsLine(r.settings)}`);
  lines.push(`token file:   ${r.token.file} (${r.token.note})`);
  const sd = r.stateDir;
  const state = sd.unchanged
    ? 'as it was'
    : `NOT as it was: ${[...sd.left.map((e) => `new ${e}`), ...sd.missing.map((e) => `gone ${e}`)].join(', ')}`;
  lines.push(
    `state dir:    ${sd.path} ${state}${sd.removed.length > 0 ? ` (removed what the server created: ${sd.removed.join(', ')})` : ''}`,
  );
  lines.push(`stopped:      ${r.stopped.signal ? `by ${r.stopped.signal}` : `exit code ${r.stopped.code ?? '?'}`}`);
  for (const c of r.rejected) lines.push(`not used:     ${describeCandidate(c)}`);
  return lines;
}
