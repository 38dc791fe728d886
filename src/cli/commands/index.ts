/**
 * Every command, registered by name. Command files import nothing heavy at
 * load time: their actions import the domain modules they need, so
 * `agyctl --help` and `--version` stay fast (bench/startup.mjs).
 */
import type { Command } from 'commander';
import type { ActionFactory } from '../action.js';
import { register as probe } from './probe.js';

export const COMMANDS: ReadonlyArray<(program: Command, action: ActionFactory) => void> = [probe];
