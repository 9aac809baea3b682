/**
 * The published schemas say what validation enforces. For memory_key, query and the Idempotency-Key header,
 * the JSON Schema that the served OpenAPI document holds (ajv, draft 2020-12) and the one MCP's tools/list
 * publishes (ajv, draft-07), each compiled in strict mode with and without the `u` regular-expression flag,
 * accept exactly the strings that the API's validation accepts (the entry's schema through `parseInput`, as
 * both faces call it; `parseIdempotencyKey` for the header and `_meta.idempotency_key`).
 *
 * Left out of the generators, because JSON Schema cannot express them: characters beyond U+FFFF
 * (validation counts UTF-16 code units, JSON Schema's lengths count code points: the descriptions say so),
 * lone surrogates (refused by validation in every field: not well-formed Unicode), and for query the
 * characters whose NFKC form is longer (U+FB01 "ﬁ", U+2474 "⑴"...), since its limit also holds after NFKC
 * normalisation (its description says so). The e-mail's disposable-provider rule is a list, stated in the
 * register e-mail's description only.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMAIL_PART_LENGTHS } from '../../src/core/email.js';
import {
  IDEMPOTENCY_KEY_MAX_CHARS,
  IDEMPOTENCY_KEY_PATTERN,
  parseIdempotencyKey,
} from '../../src/core/idempotency.js';
import type { Operation } from '../../src/core/operation-table.js';
import {
  HAS_NON_SPACE,
  NO_BIDI_CONTROLS,
  NO_CONTROL_CHARS,
  NO_NON_SPACE_CONTROL_CHARS,
  trimmedAtMost,
} from '../../src/core/operations/fields.js';
import { parseInput } from '../../src/core/validation.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { type InProcess, openInProcess } from '../mcp/mcp-harness.js';

type Schema = Record<string, any>;
type Check = (value: unknown) => boolean;

const KEY_MAX = 256;
const QUERY_MAX = 500;

/**
 * A published schema compiled by ajv in strict mode, as draft 2020-12 (OpenAPI 3.1) or draft-07 (MCP), once
 * with the `u` flag on its patterns (ajv's default) and once without; `of` builds the instance to check.
 */
function published(
  draft: '2020-12' | '07',
  schema: Schema,
  of: (value: string) => unknown = (value) => value,
): Check[] {
  return [true, false].map((unicodeRegExp) => {
    const ajv =
      draft === '07'
        ? new Ajv({ strict: true, unicodeRegExp, allErrors: true })
        : new Ajv2020({ strict: true, unicodeRegExp, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    return (value: unknown) => validate(of(value as string)) as boolean;
  });
}

/** The patterns of a string schema: its own, then those of its `allOf` (how zod publishes several). */
function patternsOf(schema: Schema): string[] {
  return [schema.pattern, ...(schema.allOf ?? []).map((s: Schema) => s.pattern)].filter(
    (p): p is string => p !== undefined,
  );
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => String.fromCharCode(from + i));
const CONTROLS = [...range(0x00, 0x1f), ...range(0x7f, 0x9f)];
const BIDI = ['\u061c', '\u200e', '\u200f', ...range(0x202a, 0x202e), ...range(0x2066, 0x2069)];
/** Every character `trim()` and `\s` treat as whitespace. */
const WHITESPACE = [
  ...'\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff',
  ...range(0x2000, 0x200a),
];
/** Just outside the refused ranges: accepted. */
const NEIGHBOURS = ['!', '~', '\u00a1', '\u061b', '\u061d', '\u200d', '\u2010', '\u2065', '\u206a'];
const ORDINARY = [...'abcxyzABC019-_.:/#é漢жß'];

const mixed = fc.oneof(
  { arbitrary: fc.constantFrom(...ORDINARY), weight: 12 },
  { arbitrary: fc.constantFrom(...WHITESPACE), weight: 3 },
  { arbitrary: fc.constantFrom(...NEIGHBOURS), weight: 2 },
  { arbitrary: fc.constantFrom(...CONTROLS), weight: 1 },
  { arbitrary: fc.constantFrom(...BIDI), weight: 1 },
);

/** Short strings of any mix, and strings around the length limit (a long run of `filler` inside). */
function strings(chars: fc.Arbitrary<string>, limit: number, filler: fc.Arbitrary<string>) {
  const part = fc.array(chars, { maxLength: 8 }).map((a) => a.join(''));
  return fc.oneof(
    fc.array(chars, { maxLength: 16 }).map((a) => a.join('')),
    fc
      .tuple(part, filler, fc.integer({ min: limit - 12, max: limit + 2 }), part)
      .map(([head, fill, n, tail]) => head + fill.repeat(n) + tail),
  );
}

/** Asserts that every checker agrees with `accepts` on `value`, and tallies the verdicts. */
function agree(value: string, accepts: boolean, checks: Check[], tally: { yes: number; no: number }) {
  for (const [i, check] of checks.entries()) {
    expect(check(value), `published schema #${i} on ${JSON.stringify(value)}`).toBe(accepts);
  }
  tally[accepts ? 'yes' : 'no'] += 1;
}

describe('the published schemas accept exactly what validation accepts', () => {
  let server: TestServer;
  let mcp: InProcess;
  let client: Client;
  let doc: Schema;
  let tools: Record<string, Schema>;
  const entry = (name: string): Operation => {
    const op = server.running.service.operations.find((o) => o.name === name);
    if (!op) throw new Error(`no entry ${name}`);
    return op;
  };
  const accepted = (op: Operation, input: Record<string, unknown>) => {
    try {
      parseInput(op.input, input);
      return true;
    } catch {
      return false;
    }
  };
  const body = (path: string, method: string): Schema =>
    doc.paths[path][method].requestBody.content['application/json'].schema;
  const parameter = (path: string, method: string, name: string): Schema =>
    doc.paths[path][method].parameters.find((p: Schema) => p.name === name).schema;

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
    doc = (await server.request('GET', '/api/ac/openapi.json')).body;
    mcp = await openInProcess({ live: new FakeLiveSource() });
    client = await mcp.connect(await mcp.register());
    const { tools: list } = await client.listTools();
    tools = Object.fromEntries(list.map((t) => [t.name, t.inputSchema]));
  });
  afterAll(async () => {
    await mcp.close();
    await server.close();
  });

  it('memory_key: control and bidi characters, empty and over-long keys', () => {
    const store = entry('memory_store');
    const checks = [
      ...published('2020-12', parameter('/api/ac/memory', 'get', 'memory_key')),
      ...published('2020-12', body('/api/ac/memory', 'post'), (k) => ({
        agent_key: 'a',
        memory_key: k,
        memory_value: 'v',
      })),
      ...published('07', tools.memory_store as Schema, (k) => ({ memory_key: k, memory_value: 'v' })),
    ];
    const tally = { yes: 0, no: 0 };
    fc.assert(
      fc.property(strings(mixed, KEY_MAX, fc.constantFrom('k', ' ', 'é')), (key) => {
        agree(key, accepted(store, { memory_key: key, memory_value: 'v' }), checks, tally);
      }),
      {
        numRuns: 1000,
        examples: [
          [''],
          [' '],
          ['a\u0000b'],
          ['\u0085'],
          ['a\u202eb'],
          ['k'.repeat(KEY_MAX)],
          ['k'.repeat(KEY_MAX + 1)],
        ],
      },
    );
    expect(tally.yes).toBeGreaterThan(250);
    expect(tally.no).toBeGreaterThan(250);
  });

  it('query: trimmed, not blank, no control characters but whitespace, at most 500 once trimmed', () => {
    const data = entry('data');
    const checks = [
      ...published('2020-12', body('/api/ac/data', 'post'), (q) => ({
        agent_key: 'a',
        query_type: 'news',
        query: q,
      })),
      ...published('07', tools.data_fetch as Schema, (q) => ({ query_type: 'news', query: q })),
    ];
    const tally = { yes: 0, no: 0 };
    const padded = fc.oneof(fc.constantFrom(...ORDINARY), fc.constantFrom(...WHITESPACE));
    fc.assert(
      fc.property(strings(mixed, QUERY_MAX, padded), (query) => {
        // The generator's characters never lengthen under NFKC, so the NFKC limit adds nothing here.
        expect(query.trim().normalize('NFKC').length).toBeLessThanOrEqual(query.trim().length);
        agree(query, accepted(data, { query_type: 'news', query }), checks, tally);
      }),
      {
        numRuns: 1000,
        examples: [
          [''],
          ['   '],
          ['\u3000\ufeff\u2028'],
          ['Berlin\u0000'],
          ['\tBerlin\n'],
          ['a\u0085'],
          [`${' '.repeat(20)}${'x'.repeat(QUERY_MAX)}\n`],
          ['x'.repeat(QUERY_MAX + 1)],
          [`x${' '.repeat(QUERY_MAX - 2)}x`],
          [`x${' '.repeat(QUERY_MAX - 1)}x`],
        ],
      },
    );
    expect(tally.yes).toBeGreaterThan(250);
    expect(tally.no).toBeGreaterThan(250);
  });

  it('Idempotency-Key: 1-255 printable ASCII characters, not only spaces', () => {
    const checks = published('2020-12', parameter('/api/ac/memory', 'post', 'Idempotency-Key'));
    const parses = (key: string) => {
      try {
        return parseIdempotencyKey(key, 'Idempotency-Key') === key;
      } catch {
        return false;
      }
    };
    const ascii = fc.oneof(
      { arbitrary: fc.constantFrom(...range(0x21, 0x7e)), weight: 12 },
      { arbitrary: fc.constant(' '), weight: 4 },
      { arbitrary: fc.constantFrom(...CONTROLS, ...BIDI, '\u00a0', 'é', '漢', '😀'), weight: 1 },
    );
    const tally = { yes: 0, no: 0 };
    fc.assert(
      fc.property(strings(ascii, IDEMPOTENCY_KEY_MAX_CHARS, fc.constantFrom('k', ' ', '-')), (key) => {
        agree(key, parses(key), checks, tally);
      }),
      {
        numRuns: 1000,
        examples: [
          [''],
          [' '],
          [' a '],
          ['a\u007f'],
          ['a'.repeat(255)],
          ['a'.repeat(256)],
          [' '.repeat(255)],
        ],
      },
    );
    expect(tally.yes).toBeGreaterThan(250);
    expect(tally.no).toBeGreaterThan(250);
  });

  it('e-mail: the published rules agree with validation, the disposable list aside', () => {
    const register = published('2020-12', body('/api/ac/register', 'post'), (email) => ({ email }));
    const credits = published('2020-12', body('/api/ac/admin/credits', 'post'), (email) => ({
      email,
      cents: 1,
    }));
    const cases: [string, boolean][] = [
      ['agent@example.com', true],
      ["o'brien+tag@example.net", true],
      [`${'a'.repeat(64)}@example.com`, true],
      [`${'a'.repeat(65)}@example.com`, false],
      [`a@${'b'.repeat(63)}.com`, true],
      [`a@${'b'.repeat(64)}.com`, false],
      [
        `${'a'.repeat(60)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(10)}.com`,
        false,
      ],
      ['a@b', false],
      ['a b@example.com', false],
      ['a\u0007b@example.com', false],
      ['a@b@example.com', false],
    ];
    for (const [email, valid] of cases) {
      expect(accepted(entry('register'), { email }), email).toBe(valid);
      for (const check of register) expect(check(email), email).toBe(valid);
    }
    for (const [email, valid] of [
      ['agent@example.com', true],
      [`${'a'.repeat(65)}@example.com`, true],
      ['a@b', false],
    ] as const) {
      expect(accepted(entry('admin_credits'), { email, cents: 1 }), email).toBe(valid);
      for (const check of credits) expect(check(email), email).toBe(valid);
    }
    // The rule left to the description: a disposable provider's address is refused by the API only.
    for (const check of register) expect(check('agent@mailinator.com')).toBe(true);
    expect(accepted(entry('register'), { email: 'agent@mailinator.com' })).toBe(false);
  });

  it('the OpenAPI document and tools/list carry the patterns of the definitions validation uses', () => {
    const json = (path: string, method: string) => body(path, method).properties;
    const KEY = [NO_CONTROL_CHARS.source, NO_BIDI_CONTROLS.source];
    const QUERY = [HAS_NON_SPACE.source, NO_NON_SPACE_CONTROL_CHARS.source, trimmedAtMost(QUERY_MAX).source];
    for (const key of [
      json('/api/ac/memory', 'post').memory_key,
      json('/api/ac/memory', 'delete').memory_key,
      parameter('/api/ac/memory', 'get', 'memory_key'),
      ...['memory_store', 'memory_retrieve', 'memory_delete'].map((t) => tools[t]?.properties?.memory_key),
    ]) {
      expect(key).toMatchObject({ type: 'string', minLength: 1, maxLength: KEY_MAX });
      expect(patternsOf(key as Schema)).toEqual(KEY);
    }
    for (const query of [json('/api/ac/data', 'post').query, tools.data_fetch?.properties?.query as Schema]) {
      expect(query.type).toBe('string');
      expect(patternsOf(query)).toEqual(QUERY);
      expect(query.description).toMatch(/once trimmed .*once normalised \(NFKC\).*no control characters/);
    }

    const registerEmail = json('/api/ac/register', 'post').email;
    expect(registerEmail).toMatchObject({ type: 'string', maxLength: 254, format: 'email' });
    expect(patternsOf(registerEmail)).toContain(EMAIL_PART_LENGTHS.source);
    expect(registerEmail.description).toMatch(/disposable/);
    for (const path of ['/api/ac/admin/credits', '/api/ac/admin/plan']) {
      expect(json(path, 'post').email).toMatchObject({ type: 'string', maxLength: 254, format: 'email' });
      expect(patternsOf(json(path, 'post').email)).toHaveLength(1);
    }

    const idempotent = Object.values(doc.paths as Record<string, Record<string, Schema>>)
      .flatMap((methods) => Object.values(methods))
      .flatMap((op) => (op.parameters ?? []).filter((p: Schema) => p.name === 'Idempotency-Key'));
    // The idempotent operations: store, batch store, retrieve, delete, search, history, restore, import and data.
    expect(idempotent).toHaveLength(9);
    for (const p of idempotent) {
      expect(p.schema).toEqual({
        type: 'string',
        minLength: 1,
        maxLength: IDEMPOTENCY_KEY_MAX_CHARS,
        pattern: IDEMPOTENCY_KEY_PATTERN.source,
      });
    }
  });
});
