// AGY_SIM_RAW_LINE_BYTES: one enormous stdout line, written in pieces with no
// newline until the very end, before any answer: the client must bound what
// it buffers (agyctl drops lines over its limit and reads on).
const PIECE = 1024 * 1024;

export function writeRawLine(bytes: number): void {
  const piece = Buffer.alloc(PIECE, 0x78); // 'x'
  for (let left = bytes; left > 0; left -= PIECE) process.stdout.write(left >= PIECE ? piece : piece.subarray(0, left));
  process.stdout.write('\n');
}
