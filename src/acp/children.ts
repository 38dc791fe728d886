/**
 * Every process group agyctl starts is registered here, so that whatever
 * way agyctl ends (error, Ctrl-C, a crash in our own code), the 'exit' hook
 * in main can kill them all. No orphan server survives us.
 */
const groups = new Set<number>();

export function registerGroup(pgid: number): void {
  groups.add(pgid);
}

export function unregisterGroup(pgid: number): void {
  groups.delete(pgid);
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // already gone
  }
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function killAllChildren(signal: NodeJS.Signals): void {
  for (const pgid of groups) signalGroup(pgid, signal);
}

/** After SIGKILL the kernel and init still need a moment to reap the group's members: wait for that, bounded. */
export async function waitGroupGone(pgid: number, timeoutMs: number, pollMs = 10): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return true;
}
