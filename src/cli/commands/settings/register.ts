/** agyctl settings show | set-auth | validate: the server's settings.json. */
import type { Command } from 'commander';
import { AUTH_TYPE_LIST } from '../../../settings/auth-types.js';
import type { ActionFactory } from '../../action.js';
import { ownerTimeoutOption } from '../../globals.js';
import type { SetAuthFlags } from './handler.js';

export function register(program: Command, action: ActionFactory): void {
  const settings = ownerTimeoutOption(
    program
      .command('settings')
      .description("show, change and validate the server's settings.json (read by the server at startup)"),
  );
  settings
    .command('show', { isDefault: true })
    .description(
      '(default) path, mode, owner, auth type, gcp project/location, needed environment variables, running servers, problems',
    )
    .action(
      action(async (io) => {
        (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'settings');
        const { runShow } = await import('./handler.js');
        return runShow(io);
      }),
    );
  settings
    .command('set-auth')
    .description(
      `set auth.type (${AUTH_TYPE_LIST}; vertex-ai, the old name of agent-platform, is written as agent-platform), keeping every other key`,
    )
    .argument('<type>', `the auth type: one of ${AUTH_TYPE_LIST}`)
    .option('--project <id>', 'gcp.project (oauth-business, agent-platform; default $GOOGLE_CLOUD_PROJECT)')
    .option('--location <region>', 'gcp.location, a region like us-central1 (default $GOOGLE_CLOUD_LOCATION)')
    .option('--force', 'move an unparsable settings.json aside to settings.json.bak-<UTC time> and write a fresh one')
    .action(
      action<SetAuthFlags>(async (io, input) => {
        (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'settings');
        const { runSetAuth } = await import('./handler.js');
        return runSetAuth(io, input);
      }),
    );
  settings
    .command('validate')
    .description('exit 0 when settings.json is usable as is, 2 with every problem listed otherwise')
    .action(
      action(async (io) => {
        (await import('../../../profiles/guard.js')).assertCommandApplies(io, 'settings');
        const { runValidate } = await import('./handler.js');
        return runValidate(io);
      }),
    );
}
