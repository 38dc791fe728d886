/**
 * What a failed sign-in means, from the server's own words: each known
 * cause gets its real fix. "Run login again for a fresh URL" is only for
 * a sign-in that really failed in the browser.
 */
import type { AcpError } from '../acp/acp-error.js';

export const FRESH_URL_HINT =
  'run `agyctl login` again for a fresh URL (the server remembers a failed attempt, so agyctl starts a new one); sign in with the newest URL only';

export function signInFailureHint(err: AcpError, env: NodeJS.ProcessEnv): string {
  const text = `${err.serverText} ${JSON.stringify(err.data ?? '')}`;
  if (/GEMINI_API_KEY/.test(text)) {
    return "export GEMINI_API_KEY=<your key> where agyctl (and the server) run, or in the server's systemd unit: the server reads its environment only at start, so restart it afterwards; then run `agyctl login --method gemini-api-key`";
  }
  if (/oauth-business/.test(text) && /gcp\.project|gcp\.location/.test(text)) {
    return 'run `agyctl settings set-auth oauth-business --project <gcp-project> --location <region>` (e.g. --location us-central1), then `agyctl login` again';
  }
  if (/agent-platform/.test(text) && /GOOGLE_API_KEY|gcp\.project/.test(text)) {
    return 'export GOOGLE_API_KEY, or run `agyctl settings set-auth agent-platform --project <gcp-project> --location <region>` with Application Default Credentials; then `agyctl login --method agent-platform`';
  }
  if (/EADDRINUSE|address already in use|could not start the callback listener/i.test(text)) {
    const port = /^\d+$/.test(env.OAUTH_CALLBACK_PORT ?? '') ? env.OAUTH_CALLBACK_PORT : /port (\d+)/i.exec(text)?.[1];
    const which = port ? `port ${port}` : 'its fixed callback port';
    return `another program on this box holds the server's ${which}: stop it (\`ss -ltnp${port ? ` 'sport = :${port}'` : ''}\` shows which; often an earlier login still running), or unset OAUTH_CALLBACK_PORT so the server picks a free port; then \`agyctl login\` again`;
  }
  return FRESH_URL_HINT;
}
