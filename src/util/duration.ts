/** Parse durations like `90`, `90s`, `10m`, `1h30m`, `500ms` into milliseconds. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(trimmed); m; m = re.exec(trimmed)) {
    total += Number(m[1]) * UNIT_MS[m[2] as string]!;
    consumed = re.lastIndex;
  }
  return consumed === trimmed.length && consumed > 0 ? Math.round(total) : undefined;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return `${m}m${String(s % 60).padStart(2, '0')}s`;
}
