// Param validation with RC01's error shapes: a missing field is -32602 with
// loc [field]; that loc is how clients learned methodId/configId.
import { invalidField, missingField } from './errors.js';
import type { Params } from './rpc.js';

export function requireString(p: Params, field: string): string {
  const v = p[field];
  if (v === undefined || v === null) throw missingField(field);
  if (typeof v !== 'string') throw invalidField(field, 'str type expected');
  return v;
}

export function requireArray(p: Params, field: string): unknown[] {
  const v = p[field];
  if (v === undefined || v === null) throw missingField(field);
  if (!Array.isArray(v)) throw invalidField(field, 'value is not a valid list');
  return v;
}

export function optionalString(p: Params, field: string): string | undefined {
  const v = p[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidField(field, 'str type expected');
  return v;
}
