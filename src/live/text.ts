/**
 * Text and links that come from upstreams are data, never markup or instructions: these helpers strip tags,
 * decode the common HTML entities, collapse whitespace, and accept only http(s) links.
 */

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
};

function decodeCodePoint(code: number, original: string): string {
  if (!Number.isInteger(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
    return original;
  }
  return String.fromCodePoint(code);
}

/** Decodes `&amp;`, `&#39;`, `&#x2F;` and the other common entities in one pass (so `&amp;lt;` → `&lt;`). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
    if (name[0] === '#') {
      const hex = name[1] === 'x' || name[1] === 'X';
      return decodeCodePoint(Number.parseInt(name.slice(hex ? 2 : 1), hex ? 16 : 10), entity);
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
}

/** Plain text from an upstream string: tags removed, entities decoded, control characters dropped, trimmed. */
export function cleanText(text: string): string {
  const withoutTags = text.replace(/<[^>]*>/g, ' ');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point.
  const decoded = decodeEntities(withoutTags).replace(/[\u0000-\u001f\u007f]/g, ' ');
  return decoded.replace(/\s+/g, ' ').trim();
}

/** The URL if it is an absolute http(s) URL, else undefined. */
export function httpUrl(value: string | null | undefined): URL | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** `www.example.com` → `example.com`. */
export function siteName(url: URL): string {
  return url.hostname.replace(/^www\./, '');
}
