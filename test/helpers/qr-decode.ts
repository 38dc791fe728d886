/**
 * A QR code as agyctl draws it on a terminal (qrcode-terminal's half
 * blocks), decoded by a real decoder: the lines become a greyscale image
 * (PGM), one terminal cell = one module wide and two modules tall, on the
 * terminal's own dark background, and Debian's zbarimg (zbar-tools; .ci/run
 * installs it) reads it. What a phone would scan, not a count of rows.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

/** [top, bottom] of a cell: 1 where the glyph paints (light on a dark terminal), 0 where the background shows. */
const CELL: Readonly<Record<string, readonly [number, number]>> = {
  '█': [1, 1],
  '▀': [1, 0],
  '▄': [0, 1],
  ' ': [0, 0],
};
const MARGIN = 4; // dark terminal background around the drawing, in modules
const SCALE = 4; // pixels per module

export function qrImage(lines: readonly string[]): Buffer {
  const cols = Math.max(...lines.map((l) => [...l].length));
  const w = (cols + 2 * MARGIN) * SCALE;
  const h = (lines.length * 2 + 2 * MARGIN) * SCALE;
  const px = Buffer.alloc(w * h, 0);
  lines.forEach((line, row) => {
    [...line].forEach((ch, col) => {
      const cell = CELL[ch];
      if (!cell) throw new Error(`not a QR glyph: ${JSON.stringify(ch)} in row ${row}`);
      cell.forEach((lit, half) => {
        if (!lit) return;
        const y0 = (MARGIN + row * 2 + half) * SCALE;
        const x0 = (MARGIN + col) * SCALE;
        for (let y = y0; y < y0 + SCALE; y += 1) px.fill(255, y * w + x0, y * w + x0 + SCALE);
      });
    });
  });
  return Buffer.concat([Buffer.from(`P5\n${w} ${h}\n255\n`), px]);
}

export function hasZbar(): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => fs.existsSync(path.join(d, 'zbarimg')));
}

/** The text zbarimg reads from the drawn lines; undefined when it finds no code. */
export async function decodeQr(lines: readonly string[]): Promise<string | undefined> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agyctl-qr-'));
  try {
    const file = path.join(dir, 'qr.pgm');
    fs.writeFileSync(file, qrImage(lines));
    const r = await execa('zbarimg', ['--raw', '-q', file], { reject: false, timeout: 20_000 });
    return r.exitCode === 0 ? String(r.stdout).trim() : undefined;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
