/**
 * settings.json through jsonc-parser (VS Code's JSON-with-comments parser):
 * a tree with the offset of every key and value, the line and column of the
 * first syntax error in plain words (Node 20's JSON.parse gives neither), and
 * minimal edits that leave every other byte (order, formatting, comments,
 * `1.0`, 20-digit numbers) as the user wrote it.
 *
 * Strict JSON by default (antigravity's server reads plain JSON); `comments`
 * allows // and /* *\/ as gemini-cli does (it strips comments, then JSON.parse:
 * trailing commas stay errors).
 *
 * Edits splice one value or one new entry with jsonc-parser's applyEdits. Its
 * `modify` is not used: it edits the first of duplicate keys (the server reads
 * the last), and its formatter re-lays out neighbours on the same line.
 */
import { applyEdits, type Node, type ParseError, ParseErrorCode, parseTree } from 'jsonc-parser';

export type JsonNode = Node;

export interface JsonOptions {
  /** Accept // and /* *\/ comments (gemini-cli's settings.json). */
  comments?: boolean | undefined;
}

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

export function parseJsonTree(text: string, options: JsonOptions = {}): JsonNode {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, {
    disallowComments: !options.comments,
    allowTrailingComma: false,
    allowEmptyContent: false,
  });
  const first = errors[0];
  if (first || !root) {
    const { message, at } = explain(text, first ?? { error: ParseErrorCode.ValueExpected, offset: 0, length: 0 });
    const { line, column } = lineColumn(text, at);
    throw new JsonSyntaxError(message, line, column);
  }
  return root;
}

/** jsonc-parser's error code as a sentence, and the offset of the offending character. */
function explain(text: string, e: ParseError): { message: string; at: number } {
  const token = text.slice(e.offset, e.offset + e.length);
  const found = describe(text, e.offset);
  switch (e.error) {
    case ParseErrorCode.ValueExpected:
      if (text.trim() === '')
        return { message: text === '' ? 'the file is empty' : 'the file holds only whitespace', at: text.length };
      return { message: `unexpected ${found} where a value was expected`, at: e.offset };
    case ParseErrorCode.InvalidSymbol:
      return { message: `unexpected ${found} where a value was expected`, at: e.offset };
    case ParseErrorCode.PropertyNameExpected:
      return { message: `expected a quoted property name, found ${found}`, at: e.offset };
    case ParseErrorCode.ColonExpected:
      return { message: `expected ':' after a property name, found ${found}`, at: e.offset };
    case ParseErrorCode.CommaExpected:
    case ParseErrorCode.CloseBraceExpected:
    case ParseErrorCode.CloseBracketExpected:
    case ParseErrorCode.EndOfFileExpected:
      return (
        badNumber(text, e.offset) ?? {
          message: `unexpected ${found} ${e.error === ParseErrorCode.EndOfFileExpected ? 'after the end of the JSON value' : 'after a value (a missing comma or bracket?)'}`,
          at: e.offset,
        }
      );
    case ParseErrorCode.InvalidNumberFormat:
    case ParseErrorCode.UnexpectedEndOfNumber:
      return { message: 'invalid number', at: e.offset };
    case ParseErrorCode.UnexpectedEndOfString:
      return { message: 'unterminated string', at: e.offset };
    case ParseErrorCode.InvalidEscapeCharacter:
    case ParseErrorCode.InvalidUnicode:
      return {
        message: 'invalid escape sequence in a string',
        at: e.offset + Math.max(0, token.search(/\\(?:[^"\\/bfnrtu]|u(?![0-9a-fA-F]{4}))/)),
      };
    case ParseErrorCode.InvalidCharacter:
      return {
        message: 'control character inside a string (escape it, e.g. \\n)',
        at: e.offset + Math.max(0, token.search(/[\u0000-\u001f]/)),
      };
    case ParseErrorCode.InvalidCommentToken:
    case ParseErrorCode.UnexpectedEndOfComment:
      return { message: 'a comment, which plain JSON does not allow (remove it)', at: e.offset };
    default:
      return { message: `unexpected ${found}`, at: e.offset };
  }
}

/** `01`, `1.2.3`: jsonc-parser ends the number early and trips on the rest; point at the number instead. */
function badNumber(text: string, offset: number): { message: string; at: number } | undefined {
  if (!/[0-9]/.test(text[offset - 1] ?? '') || !/[0-9.eE+-]/.test(text[offset] ?? '')) return undefined;
  let at = offset - 1;
  while (at > 0 && /[0-9.eE+-]/.test(text[at - 1]!)) at--;
  return { message: 'invalid number (leading zero or malformed fraction/exponent)', at };
}

function describe(text: string, offset: number): string {
  const ch = text[offset];
  if (ch === undefined) return 'end of file';
  if (ch === '\ufeff') return 'a byte-order mark';
  if (ch === '\n' || ch === '\r') return 'end of line';
  return ch < ' ' ? `control character U+${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : `'${ch}'`;
}

/** The plain value, as JSON.parse would give it (later duplicate keys win). */
export function toPlain(node: JsonNode): unknown {
  if (node.type === 'array') return (node.children ?? []).map(toPlain);
  if (node.type !== 'object') return node.value;
  // fromEntries defines own properties, so a "__proto__" key stays data, as with JSON.parse.
  return Object.fromEntries((node.children ?? []).map((p) => [p.children![0]!.value, toPlain(p.children![1]!)]));
}

/** The last property node with this key (the one JSON.parse and the server keep). */
function propertyOf(obj: JsonNode, key: string): JsonNode | undefined {
  const props = obj.children ?? [];
  for (let k = props.length - 1; k >= 0; k--) if (props[k]!.children?.[0]?.value === key) return props[k];
  return undefined;
}

export function member(obj: JsonNode, key: string): JsonNode | undefined {
  return propertyOf(obj, key)?.children?.[1];
}

/** The indentation the file uses (its first indented property), else two spaces. */
export function detectIndent(text: string): string {
  const m = /\n([ \t]+)"/.exec(text);
  return m ? m[1]! : '  ';
}

function lineIndent(text: string, pos: number): string {
  const start = text.lastIndexOf('\n', pos - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

const splice = (text: string, offset: number, length: number, content: string): string =>
  applyEdits(text, [{ offset, length, content }]);
const end = (node: JsonNode): number => node.offset + node.length;

/** How new entries are laid out: the file's indentation unit, and whether they stay on one line. */
interface Layout {
  indent: string;
  inline: boolean;
  /** The file's line ending: a CRLF file stays CRLF. */
  eol: string;
}

/** A string value to set, at a path of object keys. */
interface Entry {
  keys: readonly string[];
  value: string;
}

/** `{"a": {"b": value}}` for keys [a, b], laid out one key per line below `base`, or inline. */
function nested({ keys, value }: Entry, layout: Layout, base: string): string {
  if (keys.length === 0) return JSON.stringify(value);
  const rest = nested({ keys: keys.slice(1), value }, layout, base + layout.indent);
  if (layout.inline) return `{${JSON.stringify(keys[0])}: ${rest}}`;
  return `{${layout.eol}${base}${layout.indent}${JSON.stringify(keys[0])}: ${rest}${layout.eol}${base}}`;
}

/**
 * Set `keys` (a path of object keys) to the string `value` in `text`, which
 * must hold an object (comments allowed where `options` says so). Replaces the
 * last duplicate key, like JSON.parse reads it. New entries follow the style
 * around them: their neighbours' indentation, `{"k": v}` in a one-line file.
 */
export function setStringAt(text: string, keys: readonly string[], value: string, options: JsonOptions = {}): string {
  const root = parseJsonTree(text, options);
  if (root.type !== 'object') throw new Error('setStringAt: the top level is not an object');
  // A one-line file stays one line; `{}` (or a fresh file) gets the usual one-key-per-line layout.
  const layout: Layout = {
    indent: detectIndent(text),
    inline: (root.children ?? []).length > 0 && !text.slice(root.offset, end(root)).includes('\n'),
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
  let obj = root;
  for (let i = 0; i < keys.length; i++) {
    const prop = propertyOf(obj, keys[i]!);
    const target = prop?.children?.[1];
    if (!prop || !target) return insertEntry(text, obj, { keys: keys.slice(i), value }, layout);
    if (i === keys.length - 1 || target.type !== 'object') {
      const base = lineIndent(text, prop.offset);
      return splice(text, target.offset, target.length, nested({ keys: keys.slice(i + 1), value }, layout, base));
    }
    obj = target;
  }
  return text; // unreachable with a non-empty path
}

function insertEntry(text: string, obj: JsonNode, entry: Entry, layout: Layout): string {
  const [key, ...rest] = entry.keys;
  const inner: Entry = { keys: rest, value: entry.value };
  const props = obj.children ?? [];
  const last = props[props.length - 1];
  if (!last) return splice(text, obj.offset, obj.length, nested(entry, layout, lineIndent(text, obj.offset)));
  const after = end(last);
  if (!text.slice(obj.offset, end(obj)).includes('\n')) {
    return splice(text, after, 0, `, ${JSON.stringify(key)}: ${nested(inner, { ...layout, inline: true }, '')}`);
  }
  const base = lineIndent(text, last.offset);
  return splice(
    text,
    after,
    0,
    `,${layout.eol}${base}${JSON.stringify(key)}: ${nested(inner, { ...layout, inline: false }, base)}`,
  );
}
