/**
 * Minimal edits to JSON text: set one string at a key path by splicing the
 * source, so everything else in the file stays byte for byte as it was.
 * New entries follow the style around them: the indentation of their
 * neighbours in a multi-line object, `{"k": v}` inside a one-line object.
 */
import { entryOf, parseJsonTree, type JsonObject } from './json-tree.js';

/** The indentation the file uses (its first indented property), else two spaces. */
export function detectIndent(text: string): string {
  const m = /\n([ \t]+)"/.exec(text);
  return m ? m[1]! : '  ';
}

function lineIndent(text: string, pos: number): string {
  const start = text.lastIndexOf('\n', pos - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

const splice = (text: string, at: number, end: number, insert: string): string => text.slice(0, at) + insert + text.slice(end);

/** `{"a": {"b": value}}` for keys [a, b], laid out one key per line below `base`, or inline. */
function nested(keys: readonly string[], value: string, indent: string, base: string, inline: boolean): string {
  if (keys.length === 0) return JSON.stringify(value);
  const rest = nested(keys.slice(1), value, indent, base + indent, inline);
  if (inline) return `{${JSON.stringify(keys[0])}: ${rest}}`;
  return `{\n${base}${indent}${JSON.stringify(keys[0])}: ${rest}\n${base}}`;
}

/**
 * Set `keys` (a path of object keys) to the string `value` in `text`, which
 * must hold a JSON object whose objects along the path are objects where they
 * exist. Replaces the last duplicate key, like JSON.parse reads it.
 */
export function setStringAt(text: string, keys: readonly string[], value: string): string {
  const root = parseJsonTree(text);
  if (root.kind !== 'object') throw new Error('setStringAt: the top level is not an object');
  const indent = detectIndent(text);
  // A one-line file stays one line; `{}` (or a fresh file) gets the usual one-key-per-line layout.
  const docInline = root.entries.length > 0 && !text.slice(root.at, root.end).includes('\n');
  let obj: JsonObject = root;
  for (let i = 0; i < keys.length; i++) {
    const entry = entryOf(obj, keys[i]!);
    const last = i === keys.length - 1;
    if (!entry) return insertEntry(text, obj, keys.slice(i), value, indent, docInline);
    if (last || entry.value.kind !== 'object') {
      const base = lineIndent(text, entry.keyAt);
      return splice(text, entry.value.at, entry.value.end, nested(keys.slice(i + 1), value, indent, base, docInline));
    }
    obj = entry.value;
  }
  return text; // unreachable with a non-empty path
}

function insertEntry(text: string, obj: JsonObject, keys: readonly string[], value: string, indent: string, docInline: boolean): string {
  const [key, ...rest] = keys;
  const objInline = !text.slice(obj.at, obj.end).includes('\n');
  const last = obj.entries[obj.entries.length - 1];
  if (!last) {
    const base = lineIndent(text, obj.at);
    const body = nested([key!, ...rest], value, indent, base, docInline);
    return splice(text, obj.at, obj.end, body);
  }
  if (objInline) return splice(text, last.value.end, last.value.end, `, ${JSON.stringify(key)}: ${nested(rest, value, indent, '', true)}`);
  const base = lineIndent(text, last.keyAt);
  return splice(text, last.value.end, last.value.end, `,\n${base}${JSON.stringify(key)}: ${nested(rest, value, indent, base, false)}`);
}
