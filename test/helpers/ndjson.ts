/** NDJSON events of a running agyctl, collected as they arrive, with bounded waits for the one a test needs. */
import type { Readable } from 'node:stream';

export type Event = Record<string, unknown> & { event?: string };

export class EventStream {
  readonly events: Event[] = [];
  readonly noise: string[] = [];
  private buffer = '';
  private readonly waiters = new Set<() => void>();

  constructor(stream: Readable) {
    stream.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString();
      let nl = this.buffer.indexOf('\n');
      while (nl >= 0) {
        this.push(this.buffer.slice(0, nl));
        this.buffer = this.buffer.slice(nl + 1);
        nl = this.buffer.indexOf('\n');
      }
    });
  }

  private push(line: string): void {
    if (!line.trim()) return;
    try {
      this.events.push(JSON.parse(line) as Event);
    } catch {
      this.noise.push(line);
    }
    for (const wake of this.waiters) wake();
  }

  find(name: string): Event | undefined {
    return this.events.find((e) => e.event === name);
  }

  names(): string[] {
    return this.events.map((e) => String(e.event));
  }

  /** The first event with this name; rejects after timeoutMs with what was seen so far. */
  waitFor(name: string, timeoutMs: number): Promise<Event> {
    const found = this.find(name);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const e = this.find(name) ?? this.find('error');
        if (!e) return;
        cleanup();
        if (e.event === name) resolve(e);
        else reject(new Error(`expected a ${name} event, got an error event: ${JSON.stringify(e)}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no ${name} event within ${timeoutMs} ms; saw: ${this.names().join(', ')}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }
}
