/** Setting one entry in JSON/JSONC text changes only the bytes of that entry. */
import { parse } from 'jsonc-parser';
import { describe, expect, it } from 'vitest';
import { detectStyle, setServerEntry } from '../../src/setup/jsonc-edit.js';

const entry = { command: '/usr/bin/node', args: ['/opt/ac/dist/cli.js', 'mcp'] };

/** The entry as the edit lays it out, as property `name` at `indent`. */
function block(indent: string, unit = '  ', eol = '\n'): string {
  const lines = JSON.stringify(entry, null, unit)
    .split('\n')
    .join(eol + indent);
  return `${eol}${indent}"agent-context": ${lines}`;
}

function parsed(text: string): any {
  return parse(text, [], { allowTrailingComma: true });
}

describe('setServerEntry', () => {
  it('appends after the last server, on lines of its own', () => {
    const before = '{\n  "mcpServers": {\n    "memory": { "command": "npx" }\n  },\n  "theme": "dark"\n}\n';
    const after = setServerEntry(before, 'mcpServers', 'agent-context', entry);
    const at = before.indexOf('}\n  },') + 1;
    expect(after).toBe(`${before.slice(0, at)},${block('    ')}${before.slice(at)}`);
    expect(parsed(after).mcpServers['agent-context']).toEqual(entry);
  });

  it('keeps a trailing comma style and the comment at the end of the previous line (VS Code)', () => {
    const before =
      '{\n  // mine\n  "servers": {\n    "memory": { "type": "stdio", "command": "npx" }, // memory\n  },\n  "inputs": [],\n}\n';
    const after = setServerEntry(before, 'servers', 'agent-context', entry);
    const at = before.indexOf(' // memory') + ' // memory'.length;
    expect(after).toBe(`${before.slice(0, at) + block('    ')},${before.slice(at)}`);
  });

  it('puts the comma before a comment that ends the last line, the entry after it', () => {
    const before = '{\n  "mcpServers": {\n    "a": {"command": "x"} /* a */ // note\n  }\n}\n';
    const after = setServerEntry(before, 'mcpServers', 'agent-context', entry);
    const comma = before.indexOf('} /* a */') + 1;
    const eol = before.indexOf('// note') + '// note'.length;
    expect(after).toBe(
      `${before.slice(0, comma)},${before.slice(comma, eol)}${block('    ')}${before.slice(eol)}`,
    );
    expect(Object.keys(parsed(after).mcpServers)).toEqual(['a', 'agent-context']);
  });

  it('creates the container at the end of the top-level object when it is missing', () => {
    const before = '{\n  "globalShortcut": "Ctrl+Space"\n}\n';
    const after = setServerEntry(before, 'mcpServers', 'agent-context', entry);
    const at = before.indexOf('"\n}') + 1;
    const container = `,\n  "mcpServers": {\n    "agent-context": ${JSON.stringify(entry, null, 2).split('\n').join('\n    ')}\n  }`;
    expect(after).toBe(before.slice(0, at) + container + before.slice(at));
  });

  it('fills an empty container or an empty document object', () => {
    expect(setServerEntry('{\n  "mcpServers": {}\n}\n', 'mcpServers', 'agent-context', entry)).toBe(
      `{\n  "mcpServers": {${block('    ')}\n  }\n}\n`,
    );
    expect(parsed(setServerEntry('{}', 'servers', 'agent-context', entry))).toEqual({
      servers: { 'agent-context': entry },
    });
  });

  it('replaces an existing entry in place, keeping what surrounds it', () => {
    const before =
      '{\n  "mcpServers": {\n    "agent-context": {"command": "old"}, // keep\n    "b": {}\n  }\n}\n';
    const after = setServerEntry(before, 'mcpServers', 'agent-context', entry);
    const start = before.indexOf('{"command": "old"}');
    const end = start + '{"command": "old"}'.length;
    const value = JSON.stringify(entry, null, 2).split('\n').join('\n    ');
    expect(after).toBe(before.slice(0, start) + value + before.slice(end));
  });

  it("follows the file's indentation and line endings", () => {
    const before = '{\r\n\t"mcpServers": {\r\n\t\t"a": {}\r\n\t}\r\n}\r\n';
    const after = setServerEntry(before, 'mcpServers', 'agent-context', entry);
    const at = before.indexOf('{}') + 2;
    expect(after).toBe(`${before.slice(0, at)},${block('\t\t', '\t', '\r\n')}${before.slice(at)}`);
    expect(detectStyle(before)).toEqual({ indent: '\t', eol: '\r\n' });
    expect(detectStyle('{\n    "a": 1\n}')).toEqual({ indent: '    ', eol: '\n' });
  });

  it('stays on the line of a compact object', () => {
    const before = '{"mcpServers": {"a": {"command": "x"}}}';
    const after = setServerEntry(before, 'mcpServers', 'agent-context', entry);
    expect(after).toBe(`{"mcpServers": {"a": {"command": "x"}, "agent-context": ${JSON.stringify(entry)}}}`);
    const replaced = setServerEntry(after, 'mcpServers', 'agent-context', { command: 'y', args: [] });
    expect(replaced).toBe(
      '{"mcpServers": {"a": {"command": "x"}, "agent-context": {"command":"y","args":[]}}}',
    );
  });
});
