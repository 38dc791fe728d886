/**
 * A strict JSON (RFC 8259) parser that keeps what JSON.parse throws away:
 * the line and column of a syntax error (Node 20's messages carry neither)
 * and where every key and value sits in the text, so json-edit.ts can change
 * one value and leave every other byte (order, formatting, `1.0`, 20-digit
 * numbers) as the user wrote it. settings.json is small; speed is not a concern.
 */

/** `at`..`end` is where the value sits in the source text. */
export type JsonNode = { at: number; end: number } & (
  | { kind: 'object'; entries: JsonEntry[] }
  | { kind: 'array'; items: JsonNode[] }
  /** Strings, numbers, true, false, null: `text` is the source token, `value` what it means. */
  | { kind: 'scalar'; text: string; value: string | number | boolean | null }
);

export interface JsonEntry {
  key: string;
  /** Offset of the key's opening quote. */
  keyAt: number;
  value: JsonNode;
}

export type JsonObject = JsonNode & { kind: 'object' };

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

const WS = new Set([' ', '\t', '\n', '\r']);

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parseDocument(): JsonNode {
    this.skipWs();
    if (this.i >= this.s.length) this.fail(this.s.length === 0 ? 'the file is empty' : 'the file holds only whitespace');
    const node = this.value();
    this.skipWs();
    if (this.i < this.s.length) this.fail(`unexpected ${this.describe()} after the end of the JSON value`);
    return node;
  }

  private value(): JsonNode {
    const at = this.i;
    const node = this.bareValue();
    return { ...node, at, end: this.i };
  }

  private bareValue(): JsonNode {
    const ch = this.s[this.i];
    if (ch === '{') return this.object();
    if (ch === '[') return this.array();
    if (ch === '"') return this.stringNode();
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) return this.number();
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return { at: -1, end: -1, kind: 'scalar', text: word, value };
      }
    }
    return this.fail(`unexpected ${this.describe()} where a value was expected`);
  }

  private object(): JsonNode {
    this.i++; // {
    const entries: JsonEntry[] = [];
    this.skipWs();
    if (this.s[this.i] === '}') {
      this.i++;
      return { at: -1, end: -1, kind: 'object', entries };
    }
    for (;;) {
      this.skipWs();
      if (this.s[this.i] !== '"') this.fail(`expected a quoted property name, found ${this.describe()}`);
      const key = this.stringNode();
      this.skipWs();
      if (this.s[this.i] !== ':') this.fail(`expected ':' after property name ${key.text}, found ${this.describe()}`);
      this.i++;
      this.skipWs();
      entries.push({ key: key.value as string, keyAt: key.at, value: this.value() });
      this.skipWs();
      if (this.s[this.i] === ',') {
        this.i++;
        continue;
      }
      if (this.s[this.i] === '}') {
        this.i++;
        return { at: -1, end: -1, kind: 'object', entries };
      }
      this.fail(`expected ',' or '}' after a property value, found ${this.describe()}`);
    }
  }

  private array(): JsonNode {
    this.i++; // [
    const items: JsonNode[] = [];
    this.skipWs();
    if (this.s[this.i] === ']') {
      this.i++;
      return { at: -1, end: -1, kind: 'array', items };
    }
    for (;;) {
      this.skipWs();
      items.push(this.value());
      this.skipWs();
      if (this.s[this.i] === ',') {
        this.i++;
        continue;
      }
      if (this.s[this.i] === ']') {
        this.i++;
        return { at: -1, end: -1, kind: 'array', items };
      }
      this.fail(`expected ',' or ']' after an array element, found ${this.describe()}`);
    }
  }

  private stringNode(): JsonNode & { kind: 'scalar' } {
    const start = this.i;
    this.i++; // opening quote
    for (;;) {
      const ch = this.s[this.i];
      if (ch === undefined) {
        this.i = start;
        this.fail('unterminated string');
      }
      if (ch === '"') break;
      if (ch < ' ') this.fail('control character inside a string (escape it, e.g. \\n)');
      if (ch === '\\') this.escape();
      else this.i++;
    }
    this.i++;
    const text = this.s.slice(start, this.i);
    return { at: start, end: this.i, kind: 'scalar', text, value: JSON.parse(text) as string };
  }

  private escape(): void {
    const next = this.s[this.i + 1];
    if (next !== undefined && '"\\/bfnrt'.includes(next)) {
      this.i += 2;
      return;
    }
    if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(this.s.slice(this.i + 2, this.i + 6))) {
      this.i += 6;
      return;
    }
    this.fail('invalid escape sequence in a string');
  }

  private number(): JsonNode {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.s.slice(this.i));
    if (!m) return this.fail('invalid number');
    const text = m[0];
    const after = this.s[this.i + text.length];
    if (after !== undefined && /[0-9.eE+-]/.test(after)) this.fail('invalid number (leading zero or malformed fraction/exponent)');
    this.i += text.length;
    return { at: -1, end: -1, kind: 'scalar', text, value: Number(text) };
  }

  private skipWs(): void {
    while (this.i < this.s.length && WS.has(this.s[this.i]!)) this.i++;
  }

  private describe(): string {
    const ch = this.s[this.i];
    if (ch === undefined) return 'end of file';
    if (ch === '\ufeff') return 'a byte-order mark';
    if (ch === '\n' || ch === '\r') return 'end of line';
    return ch < ' ' ? `control character U+${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : `'${ch}'`;
  }

  private fail(message: string): never {
    const { line, column } = lineColumn(this.s, this.i);
    throw new JsonSyntaxError(message, line, column);
  }
}

/** 1-based line and column (in characters) of an offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text[k] === '\n') {
      line++;
      lineStart = k + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

export function parseJsonTree(text: string): JsonNode {
  return new Parser(text).parseDocument();
}

/** The plain value, as JSON.parse would give it (later duplicate keys win). */
export function toPlain(node: JsonNode): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'array') return node.items.map(toPlain);
  // fromEntries defines own properties, so a "__proto__" key stays data, as with JSON.parse.
  return Object.fromEntries(node.entries.map((e) => [e.key, toPlain(e.value)]));
}

/** The last entry with this key (the one JSON.parse keeps). */
export function entryOf(obj: JsonObject, key: string): JsonEntry | undefined {
  for (let k = obj.entries.length - 1; k >= 0; k--) if (obj.entries[k]!.key === key) return obj.entries[k];
  return undefined;
}

export function member(obj: JsonObject, key: string): JsonNode | undefined {
  return entryOf(obj, key)?.value;
}
