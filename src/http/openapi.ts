/**
 * The OpenAPI 3.1 document, generated from the operation table and the discovery declarations: paths,
 * parameters and bodies from the input schemas, responses from the output schemas, error responses from
 * each entry's error codes and the one status map.
 */
import { z } from 'zod';
import type { ErrorCode } from '../core/errors.js';
import { IDEMPOTENCY_KEY_MAX_CHARS, IDEMPOTENCY_KEY_PATTERN } from '../core/idempotency.js';
import { costSentence, type RestOperation } from '../core/operation-table.js';
import { SERVICE_NAME, SERVICE_VERSION } from '../core/pricing.js';
import { AUTH_DESCRIPTION, type DocumentContext, type DocumentRoute } from './document-context.js';
import { HTTP_STATUS } from './http-status.js';

type JsonSchema = Record<string, unknown>;

export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io,
    target: 'draft-2020-12',
  }) as JsonSchema;
  return rest;
}

const AGENT_KEY_SCHEMA = { type: 'string', description: 'Your API key: the same key as in the header.' };

// rate_limited: only when AC_RATE_LIMIT is on, but a client must be ready for it.
const GENERIC_ERRORS: ErrorCode[] = ['invalid_input', 'method_not_allowed', 'rate_limited', 'internal'];
const IDEMPOTENCY_ERRORS: ErrorCode[] = ['idempotency_in_progress', 'idempotency_key_reused'];

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key with the same request returns the first response (with header ' +
    'Idempotent-Replayed: true) and charges nothing more; with a different request, 422; while the first is ' +
    `still running, 409. 1-${IDEMPOTENCY_KEY_MAX_CHARS} printable ASCII characters, kept at least 24 hours, per agent. Only ` +
    'successful responses are stored: a failed request can be retried with the same key.',
  // The rule parseIdempotencyKey applies, from its one definition.
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX_CHARS,
    pattern: IDEMPOTENCY_KEY_PATTERN.source,
  },
};
const IF_MATCH_PARAMETER = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    'The memory\'s ETag ("3", its version): the request goes ahead only if the memory is still at that ' +
    'version, else 412 version_conflict with current_version, free. The same as the expected_version field.',
  schema: { type: 'string', pattern: '^"?[1-9][0-9]{0,9}"?$' },
};
const IF_NONE_MATCH_PARAMETER = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    '* : the store goes ahead only if no memory has this key (create only), else 412 version_conflict, ' +
    'free. The same as the create_only field.',
  schema: { type: 'string', enum: ['*'] },
};
const ETAG_HEADER = {
  description: 'The memory\'s version as an entity tag ("3"), for If-Match on a later store or delete.',
  schema: { type: 'string' },
};
const BODY_ERRORS: ErrorCode[] = ['invalid_json', 'payload_too_large', 'unsupported_media_type'];

function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, Set<ErrorCode>>();
  for (const code of codes) {
    const status = HTTP_STATUS[code];
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(code));
  }
  const responses: Record<string, unknown> = {};
  for (const [status, set] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `Error; code ${[...set].join(' or ')}.`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return responses;
}

function operationObject(op: RestOperation): Record<string, unknown> {
  const input = jsonSchema(op.input, 'input');
  const properties: Record<string, JsonSchema> = {
    ...(op.agentKeyField === 'none' ? {} : { agent_key: AGENT_KEY_SCHEMA }),
    ...((input.properties as Record<string, JsonSchema>) ?? {}),
  };
  const required = [
    ...(op.agentKeyField === 'required' ? ['agent_key'] : []),
    ...((input.required as string[]) ?? []),
  ];
  const codes: ErrorCode[] = [...GENERIC_ERRORS, ...op.errors];
  if (op.auth !== 'none') codes.push('unauthorized');
  if (op.http.method !== 'GET') codes.push(...BODY_ERRORS);
  if (op.idempotent) codes.push(...IDEMPOTENCY_ERRORS);
  const object: Record<string, unknown> = {
    operationId: op.name,
    tags: [tagOf(op)],
    summary: op.summary,
    description: `${op.description}\n\n${costSentence(op)}`,
    security:
      op.auth === 'agent'
        ? [{ apiKey: [] }, { bearerKey: [] }]
        : op.auth === 'admin'
          ? [{ adminToken: [] }]
          : [],
    responses: {
      '200': {
        description: op.http.ndjsonAnswer
          ? 'Success: NDJSON, one JSON object per line, each as this schema says.'
          : 'Success.',
        content: {
          [op.http.ndjsonAnswer ? 'application/x-ndjson' : 'application/json']: {
            schema: jsonSchema(op.output, 'output'),
          },
        },
        ...(op.http.etag ? { headers: { ETag: ETAG_HEADER } } : {}),
      },
      ...errorResponses(codes),
    },
  };
  const parameters: Record<string, unknown>[] = op.idempotent ? [IDEMPOTENCY_KEY_PARAMETER] : [];
  if (op.http.ifMatch) parameters.push(IF_MATCH_PARAMETER);
  if (op.http.ifNoneMatch) parameters.push(IF_NONE_MATCH_PARAMETER);
  if (op.http.ndjsonBody) {
    // The body's lines are the memories; the other fields are query parameters.
    const { ndjson, ...query } = properties;
    parameters.push(
      ...Object.entries(query).map(([name, schema]) => ({
        name,
        in: 'query',
        required: required.includes(name),
        description: schema.description,
        schema,
      })),
    );
    object.requestBody = {
      required: true,
      description: `${ndjson?.description ?? ''} Each line as this schema says.`.trim(),
      content: { 'application/x-ndjson': { schema: jsonSchema(op.http.ndjsonBody, 'input') } },
    };
  } else if (op.http.method === 'GET') {
    parameters.push(
      ...Object.entries(properties).map(([name, schema]) => ({
        name,
        in: 'query',
        required: required.includes(name),
        description: schema.description,
        schema,
      })),
    );
  } else {
    const body = { ...input, properties, required };
    object.requestBody = { required: true, content: { 'application/json': { schema: body } } };
  }
  if (parameters.length > 0) object.parameters = parameters;
  return object;
}

function documentObject(doc: DocumentRoute): Record<string, unknown> {
  const content =
    doc.output === 'text'
      ? { 'text/plain': { schema: { type: 'string' } } }
      : { 'application/json': { schema: jsonSchema(doc.output, 'output') } };
  return {
    operationId: doc.name,
    tags: ['Discovery' satisfies Tag],
    summary: doc.summary,
    security: [],
    responses: {
      '200': { description: 'Success.', content },
      ...Object.fromEntries(
        Object.entries(doc.otherStatuses ?? {}).map(([status, description]) => [
          status,
          { description, content },
        ]),
      ),
    },
  };
}

/** The groups of the document (and of the /docs page), in the order they are shown. */
const TAGS = [
  {
    name: 'Memory',
    description: 'Named text memories: store, retrieve, search, history, export and import.',
  },
  { name: 'Live data', description: 'News, web search, weather and asset prices through a shared cache.' },
  { name: 'Account', description: 'Registration, the balance, the ledger, usage and the API key.' },
  { name: 'Operator', description: 'Needs AC_ADMIN_TOKEN: accounts, credit, plans and live-data health.' },
  { name: 'Discovery', description: 'Health, readiness and the descriptions of this API.' },
] as const;
type Tag = (typeof TAGS)[number]['name'];

function tagOf(op: RestOperation): Tag {
  if (op.auth === 'admin') return 'Operator';
  if (op.name.startsWith('memory_')) return 'Memory';
  if (op.name === 'data') return 'Live data';
  return 'Account';
}

export function buildOpenApi(ctx: DocumentContext): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const at = (path: string) => {
    paths[path] ??= {};
    return paths[path];
  };
  for (const doc of ctx.documents) at(doc.path).get = documentObject(doc);
  for (const op of ctx.operations) at(op.http.path)[op.http.method.toLowerCase()] = operationObject(op);
  return {
    openapi: '3.1.0',
    info: {
      title: SERVICE_NAME,
      version: SERVICE_VERSION,
      description:
        'Persistent named memories and live data (news, search, weather, price) for AI agents, paid per call ' +
        'in cents from one balance. Every error is a JSON object {error, code, ...}: error is one sentence ' +
        'saying what was wrong and what to do. A failed request is never charged. No events or webhooks ' +
        'are sent. Paths carry no version; this document describes version 1.0.0.',
    },
    servers: [{ url: ctx.baseUrl }],
    tags: TAGS,
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: AUTH_DESCRIPTION },
        bearerKey: { type: 'http', scheme: 'bearer', description: 'The API key as a bearer token.' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token AC_ADMIN_TOKEN.' },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error', 'code'],
          properties: {
            error: { type: 'string', description: 'One sentence: what was wrong and what to do.' },
            code: { type: 'string', enum: Object.keys(HTTP_STATUS) },
            field: { type: 'string', description: 'The request field at fault, when there is one.' },
            required_cents: { type: 'integer', description: 'On 402: the price of the operation.' },
            credit_balance_cents: { type: 'integer', description: 'On 402: the current balance.' },
            retry_after_s: { type: 'integer', description: 'On 502/504/429: when to retry, if known.' },
          },
          additionalProperties: true,
        },
      },
    },
  };
}
