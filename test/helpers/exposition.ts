/**
 * A strict parser for the Prometheus text exposition format (0.0.4), to
 * prove what agyctl writes is what node_exporter's textfile collector
 * accepts. Throws on the first rule broken, naming the line.
 */
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedFamily {
  name: string;
  help: string | undefined;
  type: string | undefined;
  samples: ParsedSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, where: string): number {
  if (text === 'NaN') return NaN;
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text))
    throw new Error(`${where}: bad value ${JSON.stringify(text)}`);
  return Number(text);
}

/** Label set `{a="x",b="y"}` starting at text[0] === '{'; returns labels and the rest of the line. */
function parseLabels(text: string, where: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  while (true) {
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) };
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`${where}: label without '='`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`${where}: bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new Error(`${where}: duplicate label ${name}`);
    if (text[eq + 1] !== '"') throw new Error(`${where}: label value not quoted`);
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\n') throw new Error(`${where}: raw newline in label value`);
      if (text[j] !== '\\') {
        value += text[j];
        continue;
      }
      const next = text[++j];
      if (next === '\\') value += '\\';
      else if (next === '"') value += '"';
      else if (next === 'n') value += '\n';
      else throw new Error(`${where}: bad escape \\${next ?? ''} in label value`);
    }
    if (j >= text.length) throw new Error(`${where}: unterminated label value`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`${where}: expected ',' or '}' after a label`);
  }
}

function unescapeHelp(text: string, where: string): string {
  return text.replace(/\\(.?)/g, (_, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    throw new Error(`${where}: bad escape in HELP`);
  });
}

export function parseExposition(text: string): Map<string, ParsedFamily> {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the last line must end with a newline');
  const families = new Map<string, ParsedFamily>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: string | undefined;
  const family = (name: string, where: string): ParsedFamily => {
    if (current !== name) {
      if (closed.has(name)) throw new Error(`${where}: ${name} appears again after another family`);
      if (current) closed.add(current);
      current = name;
    }
    let f = families.get(name);
    if (!f) {
      f = { name, help: undefined, type: undefined, samples: [] };
      families.set(name, f);
    }
    return f;
  };
  text
    .split('\n')
    .slice(0, -1)
    .forEach((line, n) => {
      const where = `line ${n + 1}`;
      if (line.trim() === '') return;
      const meta = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (meta) {
        const [, kind, name, rest = ''] = meta as unknown as [string, string, string, string | undefined];
        if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name ${name}`);
        const f = family(name, where);
        if (kind === 'HELP') {
          if (f.help !== undefined) throw new Error(`${where}: second HELP for ${name}`);
          f.help = unescapeHelp(rest, where);
        } else {
          if (f.type !== undefined) throw new Error(`${where}: second TYPE for ${name}`);
          if (f.samples.length > 0) throw new Error(`${where}: TYPE for ${name} after its samples`);
          if (!TYPES.has(rest.trim())) throw new Error(`${where}: unknown type ${rest}`);
          f.type = rest.trim();
        }
        return;
      }
      if (line.startsWith('#')) return; // other comments are allowed
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(.*)$/.exec(line);
      if (!m) throw new Error(`${where}: not a sample: ${line}`);
      const name = m[1]!;
      let rest = m[2]!;
      let labels: Record<string, string> = {};
      if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, where));
      const parts = rest.trim().split(/\s+/);
      if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2)
        throw new Error(`${where}: expected ' value [timestamp]'`);
      const value = parseValue(parts[0]!, where);
      if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`${where}: bad timestamp`);
      const f = family(name, where);
      const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
      if (series.has(key)) throw new Error(`${where}: duplicate series ${name}`);
      series.add(key);
      f.samples.push({ name, labels, value });
    });
  return families;
}
