/**
 * Sets one server entry in a client's JSON/JSONC configuration text while leaving every other byte as it
 * was: comments, trailing commas, key order, indentation and line endings. jsonc-parser's `modify` finds
 * where the entry goes; its own formatter is not used because it reformats the neighbouring lines too, so
 * the inserted text is laid out here in the file's own indentation, on lines of its own.
 */
import { applyEdits, type Edit, findNodeAtLocation, modify, type Node, parseTree } from 'jsonc-parser';

/** How a file lays out its JSON: the indentation of one level and the line ending. */
export interface TextStyle {
  indent: string;
  eol: string;
}

export function detectStyle(text: string): TextStyle {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const first = /^([ \t]+)["/}\]]/m.exec(text)?.[1];
  const indent = first === undefined ? '  ' : first.startsWith('\t') ? '\t' : first;
  return { indent, eol };
}

/** `value` as indented JSON whose continuation lines start with `base`. */
export function pretty(value: unknown, base: string, style: TextStyle): string {
  return JSON.stringify(value, null, style.indent)
    .split('\n')
    .join(style.eol + base);
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** True when only blanks precede `offset` on its line. */
function startsLine(text: string, offset: number): boolean {
  return text.slice(lineStart(text, offset), offset).trim() === '';
}

/** The leading whitespace of the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart(text, offset)))?.[0] ?? '';
}

/**
 * After the last property of an object, the offset where a new line can start without cutting a comma or a
 * comment off the property it belongs to; undefined if more JSON follows on that line.
 */
function endOfPropertyLine(text: string, from: number): { at: number; trailingComma: boolean } | undefined {
  let i = from;
  const skipBlanks = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  skipBlanks();
  const trailingComma = text[i] === ',';
  if (trailingComma) i++;
  for (;;) {
    skipBlanks();
    if (text.startsWith('//', i)) {
      const eol = text.indexOf('\n', i);
      i = eol === -1 ? text.length : eol;
      if (text[i - 1] === '\r') i--;
      break;
    }
    if (!text.startsWith('/*', i)) break;
    const close = text.indexOf('*/', i + 2);
    if (close === -1 || /[\r\n]/.test(text.slice(i, close))) break;
    i = close + 2;
  }
  const atEol = i === text.length || text[i] === '\n' || text[i] === '\r';
  return atEol ? { at: i, trailingComma } : undefined;
}

/** The edits that add `"key": value` as the last property of `parent`, which already has properties. */
function appendProperty(text: string, parent: Node, key: string, value: unknown, raw: Edit): Edit[] {
  const style = detectStyle(text);
  const previous = parent.children?.at(-1);
  const end = raw.offset;
  const line =
    previous !== undefined && startsLine(text, previous.offset) ? endOfPropertyLine(text, end) : undefined;
  if (previous === undefined || line === undefined) {
    // A compact object (`{"a": 1, "b": 2}`): stay on its line.
    return [{ ...raw, content: `, ${JSON.stringify(key)}: ${JSON.stringify(value)}` }];
  }
  const indent = lineIndent(text, previous.offset);
  const property = `${style.eol}${indent}${JSON.stringify(key)}: ${pretty(value, indent, style)}`;
  // The file's style: a trailing comma after the last property stays one (JSONC, VS Code's mcp.json).
  if (line.trailingComma) return [{ offset: line.at, length: 0, content: `${property},` }];
  if (line.at === end) return [{ offset: end, length: 0, content: `,${property}` }];
  return [
    { offset: end, length: 0, content: ',' },
    { offset: line.at, length: 0, content: property },
  ];
}

/** The edits that put `"key": value` into the empty object `parent`. */
function fillEmptyObject(text: string, parent: Node, key: string, value: unknown): Edit[] {
  const style = detectStyle(text);
  const outer = lineIndent(text, parent.offset);
  const inner = outer + style.indent;
  const property = `${style.eol}${inner}${JSON.stringify(key)}: ${pretty(value, inner, style)}`;
  const start = parent.offset + 1;
  const between = text.slice(start, parent.offset + parent.length - 1);
  if (between.trim() === '')
    return [{ offset: start, length: between.length, content: property + style.eol + outer }];
  return [{ offset: start, length: 0, content: property }]; // keep the comments that sit inside
}

/**
 * The text with `root[containerKey][name]` set to `entry`, creating the container if it is missing. The
 * caller has checked that the text parses to an object whose container, if present, is an object.
 */
export function setServerEntry(text: string, containerKey: string, name: string, entry: unknown): string {
  const root = parseTree(text, [], { allowTrailingComma: true });
  const [raw] = modify(text, [containerKey, name], entry, {});
  if (raw === undefined) return text;
  const style = detectStyle(text);
  if (root === undefined) {
    // Nothing but comments or blanks: the document goes first.
    const document = pretty({ [containerKey]: { [name]: entry } }, '', style);
    return applyEdits(text, [
      { offset: 0, length: 0, content: document + (text.length > 0 ? style.eol : '') },
    ]);
  }
  const container = findNodeAtLocation(root, [containerKey]);
  const existing = container && findNodeAtLocation(container, [name]);
  if (existing !== undefined) {
    const property = existing.parent ?? existing;
    const content = startsLine(text, property.offset)
      ? pretty(entry, lineIndent(text, property.offset), style)
      : JSON.stringify(entry); // a compact object stays compact
    return applyEdits(text, [{ offset: existing.offset, length: existing.length, content }]);
  }
  const [parent, key, value] =
    container === undefined ? [root, containerKey, { [name]: entry }] : [container, name, entry];
  const edits =
    (parent.children?.length ?? 0) === 0
      ? fillEmptyObject(text, parent, key, value)
      : appendProperty(text, parent, key, value, raw);
  return applyEdits(text, edits);
}
