// The simulated model: a deterministic reply and its split into streaming
// deltas. Deterministic so tests can assert the exact text.

/** Concatenated text blocks of an ACP prompt; other block types (image, audio, resource) carry no text here. */
export function promptText(prompt: unknown[]): string {
  return prompt
    .filter((b): b is { type: 'text'; text: string } => {
      const o = b as { type?: unknown; text?: unknown };
      return o !== null && typeof o === 'object' && o.type === 'text' && typeof o.text === 'string';
    })
    .map((b) => b.text)
    .join('\n');
}

const EXACT = /Reply with exactly:[ \t]*([^\n]*)/i;

/**
 * "Reply with exactly: X" answers X (the rest of that line up to and
 * including the first sentence end, so the reference's "Reply with exactly:
 * HELLO ACP. Do not use any tools." answers "HELLO ACP."). Anything else
 * answers "SIM ECHO: <prompt text>".
 */
export function replyFor(text: string): string {
  const m = EXACT.exec(text);
  if (m) {
    const rest = m[1]!.trim();
    const stop = rest.indexOf('. ');
    const exact = stop >= 0 ? rest.slice(0, stop + 1) : rest;
    if (exact !== '') return exact;
  }
  return `SIM ECHO: ${text}`;
}

/**
 * Pure deltas, at least three when the text has three characters, cut at
 * fixed offsets so tokens split mid-word like RC01's chunks did.
 */
export function splitIntoChunks(text: string): string[] {
  const chars = Array.from(text); // never cut inside a surrogate pair
  if (chars.length === 0) return [];
  const pieces = Math.min(chars.length, Math.max(3, Math.ceil(chars.length / 24)));
  const out: string[] = [];
  for (let i = 0; i < pieces; i++) {
    // floor(i*n/p) strictly increases when n >= p, so no piece is empty.
    const from = Math.floor((i * chars.length) / pieces);
    const to = Math.floor(((i + 1) * chars.length) / pieces);
    out.push(chars.slice(from, to).join(''));
  }
  return out;
}
