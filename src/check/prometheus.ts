/**
 * A small writer for the Prometheus text exposition format (version 0.0.4),
 * the format node_exporter's textfile collector reads. Rules followed: one
 * HELP and one TYPE line per family before its samples, all samples of a
 * family together, metric and label names from the allowed alphabets,
 * label values escaped (\\, \", \n), HELP text escaped (\\, \n), values as
 * Go floats (NaN, +Inf, -Inf), and a final newline.
 */
export type MetricType = 'gauge' | 'counter' | 'untyped';

export interface Sample {
  labels?: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export const escapeLabelValue = (v: string): string =>
  v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
export const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function formatLabels(labels: Record<string, string> | undefined): string {
  const entries = Object.entries(labels ?? {});
  if (entries.length === 0) return '';
  for (const [k] of entries) {
    if (!LABEL_NAME.test(k) || k.startsWith('__')) throw new Error(`invalid Prometheus label name: ${k}`);
  }
  return `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

export function renderExposition(families: readonly MetricFamily[]): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const f of families) {
    if (!METRIC_NAME.test(f.name)) throw new Error(`invalid Prometheus metric name: ${f.name}`);
    if (seen.has(f.name)) throw new Error(`duplicate Prometheus metric family: ${f.name}`);
    seen.add(f.name);
    if (f.samples.length === 0) continue;
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    const series = new Set<string>();
    for (const s of f.samples) {
      const labels = formatLabels(s.labels);
      if (series.has(labels)) throw new Error(`duplicate Prometheus series: ${f.name}${labels}`);
      series.add(labels);
      lines.push(`${f.name}${labels} ${formatValue(s.value)}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
