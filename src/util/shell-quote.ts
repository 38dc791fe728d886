/**
 * POSIX shell quoting for command lines agyctl builds (the remote login in
 * connect) or prints for a user to paste (login's tunnel command).
 */

/** Safe words as they are; anything else in single quotes, where only ' itself needs care. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
