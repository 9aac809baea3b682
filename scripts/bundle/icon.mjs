/**
 * The console's icon (src/web/console/icon.svg) as a PNG, which an MCP Bundle needs (`mcpb validate` accepts no
 * SVG), drawn from the SVG at build time so that the two cannot differ. The SVG is read as the subset it is
 * written in: a square viewBox, then `rect` (x, y, width, height, rx, fill), `path` (absolute or relative
 * M/L/H/V, open, stroked with round caps and joins, fill none) and `circle` (cx, cy, r, fill), painted in
 * order. Anything else stops the build with a message, rather than drawing a different icon. Each pixel is
 * the coverage of a grid of samples (8x8 below 256 pixels, 4x4 from there), and the PNG is written with Node's
 * zlib: no rasteriser dependency.
 */
import { deflateSync } from 'node:zlib';

/** The attributes of one tag, by name. */
function attributes(tag) {
  return Object.fromEntries([...tag.matchAll(/([\w:-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

function number(attrs, name, fallback) {
  const value = attrs[name];
  if (value === undefined) {
    if (fallback === undefined) throw new Error(`icon: <${attrs.__tag}> has no ${name}`);
    return fallback;
  }
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new Error(`icon: ${name}="${value}" is not a number`);
  return parsed;
}

/** `#rgb` or `#rrggbb` as [r, g, b]. */
function colour(value) {
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(value ?? '')?.[1];
  if (!hex) throw new Error(`icon: colour ${JSON.stringify(value)} is not #rgb or #rrggbb`);
  const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
  return [0, 2, 4].map((i) => Number.parseInt(full.slice(i, i + 2), 16));
}

/** The segments of an open path made of M/L/H/V commands (absolute or relative), as [x1, y1, x2, y2]. */
function segmentsOf(d) {
  const tokens = d.match(/[a-zA-Z]|-?(?:\d+\.?\d*|\.\d+)(?:e-?\d+)?/g) ?? [];
  const segments = [];
  let x = 0;
  let y = 0;
  let command = '';
  let i = 0;
  const next = () => {
    const token = tokens[i++];
    const value = Number(token);
    if (token === undefined || !Number.isFinite(value)) throw new Error(`icon: path "${d}" is cut short`);
    return value;
  };
  while (i < tokens.length) {
    if (/[a-zA-Z]/.test(tokens[i])) command = tokens[i++];
    const relative = command === command.toLowerCase();
    const [dx, dy] = relative ? [x, y] : [0, 0];
    let nx = x;
    let ny = y;
    switch (command.toUpperCase()) {
      case 'M':
      case 'L':
        nx = dx + next();
        ny = dy + next();
        break;
      case 'H':
        nx = dx + next();
        break;
      case 'V':
        ny = dy + next();
        break;
      default:
        throw new Error(`icon: path command ${JSON.stringify(command)} is not drawn (M, L, H, V only)`);
    }
    if (command.toUpperCase() !== 'M') segments.push([x, y, nx, ny]);
    x = nx;
    y = ny;
    // Coordinates after a moveto are implicit linetos.
    if (command === 'M') command = 'L';
    else if (command === 'm') command = 'l';
  }
  return segments;
}

function distanceToSegment(px, py, [x1, y1, x2, y2]) {
  const vx = x2 - x1;
  const vy = y2 - y1;
  const length2 = vx * vx + vy * vy;
  const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((px - x1) * vx + (py - y1) * vy) / length2));
  return Math.hypot(px - (x1 + t * vx), py - (y1 + t * vy));
}

function insideRoundedRect(px, py, { x, y, width, height, rx }) {
  if (px < x || py < y || px > x + width || py > y + height) return false;
  const cx = Math.min(Math.max(px, x + rx), x + width - rx);
  const cy = Math.min(Math.max(py, y + rx), y + height - rx);
  return Math.hypot(px - cx, py - cy) <= rx;
}

/** The SVG's shapes, in paint order, each with an `inside(x, y)` test in viewBox units and its colour. */
export function parseIcon(svg) {
  const viewBox = /<svg\b[^>]*\bviewBox="([^"]+)"/
    .exec(svg)?.[1]
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  if (viewBox?.length !== 4 || viewBox[0] !== 0 || viewBox[1] !== 0 || viewBox[2] !== viewBox[3])
    throw new Error('icon: the SVG needs a square viewBox="0 0 N N"');
  const shapes = [];
  const body = svg.replace(/<svg\b[^>]*>|<\/svg>|<title>[^<]*<\/title>/g, '').trim();
  for (const [tag, name] of body.matchAll(/<(\w+)\b[^>]*\/>|\S/g)) {
    if (!name) throw new Error(`icon: unexpected ${JSON.stringify(tag)} in the SVG`);
    const attrs = { ...attributes(tag), __tag: name };
    if (name === 'rect') {
      const rect = {
        x: number(attrs, 'x', 0),
        y: number(attrs, 'y', 0),
        width: number(attrs, 'width'),
        height: number(attrs, 'height'),
      };
      rect.rx = Math.min(number(attrs, 'rx', 0), rect.width / 2, rect.height / 2);
      shapes.push({ colour: colour(attrs.fill), inside: (px, py) => insideRoundedRect(px, py, rect) });
    } else if (name === 'circle') {
      const [cx, cy, r] = [number(attrs, 'cx'), number(attrs, 'cy'), number(attrs, 'r')];
      shapes.push({ colour: colour(attrs.fill), inside: (px, py) => Math.hypot(px - cx, py - cy) <= r });
    } else if (name === 'path') {
      if (
        attrs.fill !== 'none' ||
        attrs['stroke-linecap'] !== 'round' ||
        attrs['stroke-linejoin'] !== 'round' ||
        /[zZ]/.test(attrs.d ?? '')
      )
        throw new Error('icon: only open paths with fill="none" and round caps and joins are drawn');
      const segments = segmentsOf(attrs.d ?? '');
      const half = number(attrs, 'stroke-width', 1) / 2;
      // A stroke with round caps and joins is the set of points within half its width of the path.
      shapes.push({
        colour: colour(attrs.stroke),
        inside: (px, py) => segments.some((segment) => distanceToSegment(px, py, segment) <= half),
      });
    } else {
      throw new Error(`icon: <${name}> is not drawn (rect, circle and path only)`);
    }
  }
  if (shapes.length === 0) throw new Error('icon: the SVG draws nothing');
  return { size: viewBox[2], shapes };
}

/** RGBA pixels of the icon at `size` x `size`, each the average of a grid of samples. */
export function rasterise(svg, size) {
  const icon = parseIcon(svg);
  const SAMPLES = size >= 256 ? 4 : 8;
  const scale = icon.size / size;
  const pixels = Buffer.alloc(size * size * 4);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          const x = (px + (sx + 0.5) / SAMPLES) * scale;
          const y = (py + (sy + 0.5) / SAMPLES) * scale;
          // The topmost shape that covers the sample (every shape is opaque).
          for (let i = icon.shapes.length - 1; i >= 0; i--) {
            const shape = icon.shapes[i];
            if (shape.inside(x, y)) {
              r += shape.colour[0];
              g += shape.colour[1];
              b += shape.colour[2];
              a += 1;
              break;
            }
          }
        }
      }
      const at = (py * size + px) * 4;
      // Colour averaged over the covered samples (not premultiplied), alpha the covered fraction.
      if (a > 0) {
        pixels[at] = Math.round(r / a);
        pixels[at + 1] = Math.round(g / a);
        pixels[at + 2] = Math.round(b / a);
        pixels[at + 3] = Math.round((255 * a) / (SAMPLES * SAMPLES));
      }
    }
  }
  return pixels;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A PNG (8-bit RGBA, not interlaced) of `size` x `size` RGBA pixels. */
export function encodePng(pixels, size) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // bit depth 8, colour type RGBA, deflate, adaptive filtering, no interlace
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    // Filter type 0 (none) before each row.
    pixels.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The SVG icon as a `size` x `size` PNG. */
export function iconPng(svg, size) {
  return encodePng(rasterise(svg, size), size);
}
