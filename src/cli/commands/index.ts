/**
 * Every command, registered by name. Command files import nothing heavy at
 * load time: their actions import the domain modules they need, so
 * `agyctl --help` and `--version` stay fast (bench/startup.mjs).
 */
import type { Command } from 'commander';
import type { ActionFactory } from '../action.js';
import { register as probe } from './probe.js';
import { register as check } from './check.js';
import { register as settings } from './settings.js';
import { register as login } from './login.js';
import { register as logout } from './logout.js';
import { register as sessions } from './sessions.js';
import { register as backup } from './backup.js';
import { register as restore } from './restore.js';
import { register as connect } from './connect.js';
import { register as loginSupervisor } from './login-supervisor.js';
import { register as completion } from './completion.js';

export const COMMANDS: ReadonlyArray<(program: Command, action: ActionFactory) => void> = [probe, check, settings, login, logout, sessions, backup, restore, connect, loginSupervisor, completion];
