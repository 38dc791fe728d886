/**
 * Every command, registered by name. Command files import nothing heavy at
 * load time: their actions import the domain modules they need, so
 * `agyctl --help` and `--version` stay fast (bench/startup.mjs).
 */
import type { Command } from 'commander';
import type { ActionFactory } from '../action.js';
import { register as backup } from './backup/register.js';
import { register as check } from './check/register.js';
import { register as completion } from './completion/register.js';
import { register as connect } from './connect/register.js';
import { register as login } from './login/register.js';
import { register as logout } from './logout/register.js';
import { register as probe } from './probe/register.js';
import { register as restore } from './restore/register.js';
import { register as server } from './server/register.js';
import { register as sessions } from './sessions/register.js';
import { register as settings } from './settings/register.js';
import { register as version } from './version/register.js';

export const COMMANDS: ReadonlyArray<(program: Command, action: ActionFactory) => void> = [
  probe,
  check,
  settings,
  login,
  logout,
  sessions,
  backup,
  restore,
  connect,
  server,
  completion,
  version,
];
