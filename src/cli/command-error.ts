/**
 * What a command's failure becomes: the one mapping from anything thrown to
 * the error (exit code, code, message, hint) that is reported. main uses it
 * for a foreground command, the login supervisor for the login it runs, so
 * a failure ends the same way in either process. Ordinary file-system
 * failures are never "bugs" (exit 1): they name the path and the fix.
 */
import { type AgyError, toAgyError } from '../core/errors.js';
import { fsAgyError } from '../util/fs-errors.js';

export function commandError(thrown: unknown, stateDir: string | undefined): AgyError {
  const roots =
    stateDir === undefined
      ? []
      : [
          {
            dir: stateDir,
            role: 'the state dir',
            also: 'or point --state-dir (AGYCTL_STATE_DIR) at the right directory',
          },
        ];
  return fsAgyError(thrown, { roots }) ?? toAgyError(thrown);
}
