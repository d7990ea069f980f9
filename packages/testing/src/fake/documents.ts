import { crc32, deflateSync } from 'node:zlib';

/** Text as a PDF string literal: backslash and parentheses escaped, anything outside printable ASCII as `?`. */
const pdfText = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').replace(/[\\()]/g, (c) => `\\${c}`);

/**
 * A one-page PDF that any viewer opens: Helvetica text lines, with a correct cross-reference
 * table (byte offsets), so the fake's "certificate" is a real file of its type.
 */
export function pdfDocument(title: string, lines: string[]): Buffer {
  const text = [`BT /F1 22 Tf 72 770 Td (${pdfText(title)}) Tj ET`]
    .concat(lines.map((line, i) => `BT /F1 12 Tf 72 ${730 - i * 20} Td (${pdfText(line)}) Tj ET`))
    .join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(text, 'latin1')} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/**
 * A PNG image (RGB, 8 bits) of `width` x `height`, each pixel from `pixel(x, y)` as [r, g, b]: a
 * real file of its type, for the fake's scanned documents.
 */
export function pngImage(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Buffer {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    raw[row] = 0; // filter: none
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), row + 1 + x * 3);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolour, deflate, adaptive filtering, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A scanned bank statement as a PNG: a letterhead band and rows of "text", tinted per business. */
export function bankStatementPng(seed: string): Buffer {
  let hash = 0;
  for (const c of seed) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  const tint: [number, number, number] = [40 + (hash % 120), 60 + ((hash >> 8) % 120), 110 + ((hash >> 16) % 120)];
  return pngImage(240, 160, (x, y) => {
    if (y < 28) return tint;
    const line = (y - 40) % 14;
    if (y >= 40 && line < 5 && x > 16 && x < 224 - ((y * 7) % 60)) return [70, 70, 80];
    return [250, 250, 247];
  });
}
