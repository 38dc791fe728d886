/** `agyctl version`: loads the SQLite binding and queries it, so a runtime that drifted from its binding fails here. */
import { EXIT } from '../../../core/errors.js';
import { agyctlVersion, bundledRuntime } from '../../../core/runtime.js';
import type { CommandResult, HandlerIO } from '../../action.js';

export interface VersionReport {
  agyctl: string;
  node: string;
  /** `executable`: the single executable's own Node; `node`: the Node that runs the npm package. */
  runtime: 'executable' | 'node';
  /** The executable, or the node binary running bin/agyctl.js. */
  executable: string;
  sqlite: string;
  betterSqlite3: string;
  /** The addon file that was loaded. */
  binding: string;
  platform: string;
}

export async function versionCommand(io: HandlerIO): Promise<CommandResult> {
  const { betterSqlite3Version, sqliteBinding, sqliteVersion } = await import('../../../backup/sqlite.js');
  const binding = sqliteBinding();
  const report: VersionReport = {
    agyctl: agyctlVersion(),
    node: process.versions.node,
    runtime: bundledRuntime() ? 'executable' : 'node',
    executable: process.execPath,
    sqlite: sqliteVersion(),
    betterSqlite3: betterSqlite3Version(),
    binding: binding.path,
    platform: `${process.platform}-${process.arch}`,
  };
  io.out.print(`agyctl ${report.agyctl}`);
  io.out.print(
    `Node.js ${report.node} (${report.runtime === 'executable' ? 'in the executable' : 'the system Node'}: ${report.executable})`,
  );
  io.out.print(`SQLite ${report.sqlite} (better-sqlite3 ${report.betterSqlite3})`);
  io.out.print(`binding ${report.binding}`);
  return { exit: EXIT.ok, data: { version: report } };
}
