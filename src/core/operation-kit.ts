/**
 * What an entry of the operation table is, the one wording of its price, and the three builders that give
 * each kind of entry its fixed fields, so that the table (operations.ts) writes only what differs:
 * - `publicOperation`: no authentication (registration);
 * - `adminOperation`: the operator's token;
 * - `agentOperation`: an agent's API key, free;
 * - `chargedOperation`: an agent's API key, charged through the ledger. Its core function receives the
 *   price and the ledger name from the entry (`ChargeContext`), never builds its own.
 */
import type { z } from 'zod';
import type { Core } from './core.js';
import type { ErrorCode } from './errors.js';
import { type ChargeContext, type Recorder, recorderFor } from './ledger.js';
import type { ChargedOperationName } from './model.js';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/** Who may call: anyone, an agent with its API key, or the operator with the admin token. */
export type Auth = 'none' | 'agent' | 'admin';

/** What an MCP client may assume about a tool (see the MCP ToolAnnotations). */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Cents charged on success; `cachedCents` when the result may come from the cache. */
export interface Cost {
  cents: number;
  cachedCents?: number;
  /** The price is per item of the request (`memory`: per memory of a batch), not per call. */
  per?: 'memory';
}

/** A REST route of the table, and the HTTP headers of conditional requests it takes or answers. */
export interface HttpRoute {
  method: HttpMethod;
  path: string;
  /** `If-Match: "N"` is read into the input's `expected_version` (a memory's version). */
  ifMatch?: true;
  /** `If-None-Match: *` is read into the input's `create_only`. */
  ifNoneMatch?: true;
  /** The answer's `memory.version` is sent as `ETag: "N"`. */
  etag?: true;
  /**
   * The body is NDJSON (`application/x-ndjson`, at most `Limits.importMaxBytes`), each line as this schema
   * says, given to the input's `ndjson` field as text; the other fields come from the query string.
   */
  ndjsonBody?: z.ZodType;
  /** The answer is NDJSON, streamed: `run` gives an async iterable of lines, each as the output schema says. */
  ndjsonAnswer?: true;
}

/** How an operation is offered as an MCP tool. */
export interface McpTool<In extends z.ZodType = z.ZodType> {
  tool: string;
  hints: ToolHints;
  /**
   * The question to put to the person before a call with this input runs (a destructive change), or
   * undefined when the call needs no confirmation. Asked only where the client can answer in the same call
   * (MCP 2026-07-28 with elicitation); elsewhere the call runs as it always has.
   */
  confirm?(input: z.output<In>): string | undefined;
}

export interface Operation<In extends z.ZodType = z.ZodType, Out extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  /** The REST route; absent for an operation that only MCP offers. */
  http?: HttpRoute;
  /** The MCP tool; absent for an operation that only REST offers (registration, the operator's). */
  mcp?: McpTool<In>;
  auth: Auth;
  /**
   * Whether the REST request must repeat the key in an `agent_key` field (the spec's rule for its own
   * protected endpoints), may do so, or has none (unauthenticated and admin operations).
   */
  agentKeyField: 'required' | 'optional' | 'none';
  /**
   * Whether an idempotency key (REST `Idempotency-Key`, MCP `_meta.idempotency_key`) is honoured: set on
   * every operation that charges an agent or changes its data.
   */
  idempotent?: true;
  /** What the operation charges; for a charged entry, exactly what its core function debits. */
  cost: Cost;
  /** One line. */
  summary: string;
  /** For agents: what it does and what to do on failure. Its price is added by each face with `costSentence`. */
  description: string;
  /** Error codes this operation can answer besides the generic ones (400, 401, 500...). */
  errors: ErrorCode[];
  input: In;
  output: Out;
  /**
   * `record` must receive the response inside the transaction that charges for it; `spentBy` is the OAuth
   * client whose access token the request carried, named in the ledger entry of a charge.
   */
  run(
    core: Core,
    agentId: string | undefined,
    input: z.output<In>,
    record?: Recorder,
    spentBy?: string,
  ): Promise<z.input<Out>>;
}

export type RestOperation = Operation & { http: NonNullable<Operation['http']> };

/** The operations with a REST route. */
export function restOperations(operations: readonly Operation[]): RestOperation[] {
  return operations.filter((op): op is RestOperation => op.http !== undefined);
}

/** The figures of a price: "1", or "2 fresh, 0 cached" when the result may come from the cache. */
export function costFigures(cost: Cost): string {
  if (cost.per) return `${cost.cents} per ${cost.per}`;
  return cost.cachedCents === undefined ? `${cost.cents}` : `${cost.cents} fresh, ${cost.cachedCents} cached`;
}

/** "Cost: 1 cents." or "Cost: 2 cents fresh, 0 when served from cache.": the one wording of a price. */
export function costSentence(op: Pick<Operation, 'cost'>): string {
  if (op.cost.per) return `Cost: ${op.cost.cents} cents per ${op.cost.per}.`;
  return op.cost.cachedCents === undefined
    ? `Cost: ${op.cost.cents} cents.`
    : `Cost: ${op.cost.cents} cents fresh, ${op.cost.cachedCents} when served from cache.`;
}

export const READS: ToolHints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

const FREE: Cost = Object.freeze({ cents: 0 });

/** What every builder takes: the fields in which entries differ. */
type EntryFields<In extends z.ZodType, Out extends z.ZodType> = Pick<
  Operation<In, Out>,
  'name' | 'title' | 'http' | 'mcp' | 'summary' | 'description' | 'errors' | 'input' | 'output'
>;

type Result<Out extends z.ZodType> = Promise<z.input<Out>>;

function requireAgent(agentId: string | undefined): string {
  if (agentId === undefined) throw new Error('an agent operation ran without an authenticated agent');
  return agentId;
}

/** Keeps each entry's input and output types tied to its `run` while the table holds them all. */
function erase<In extends z.ZodType, Out extends z.ZodType>(op: Operation<In, Out>): Operation {
  return op as unknown as Operation;
}

/** A free operation that needs no agent: anyone's (`none`) or the operator's (`admin`). */
function withoutAgent<In extends z.ZodType, Out extends z.ZodType>(
  auth: 'none' | 'admin',
  entry: EntryFields<In, Out> & { run(core: Core, input: z.output<In>): Result<Out> },
): Operation {
  const { run, ...fields } = entry;
  return erase<In, Out>({
    ...fields,
    auth,
    agentKeyField: 'none',
    cost: FREE,
    run: (core, _agent, input) => run(core, input),
  });
}

/** An operation anyone may call, free. */
export function publicOperation<In extends z.ZodType, Out extends z.ZodType>(
  entry: EntryFields<In, Out> & { run(core: Core, input: z.output<In>): Result<Out> },
): Operation {
  return withoutAgent('none', entry);
}

/** An operation of the operator (admin token), free. */
export function adminOperation<In extends z.ZodType, Out extends z.ZodType>(
  entry: EntryFields<In, Out> & { run(core: Core, input: z.output<In>): Result<Out> },
): Operation {
  return withoutAgent('admin', entry);
}

/**
 * A free operation of the calling agent. Its REST request may repeat the key in `agent_key`; an MCP-only
 * one has no such field.
 */
export function agentOperation<In extends z.ZodType, Out extends z.ZodType>(
  entry: EntryFields<In, Out> & { run(core: Core, agentId: string, input: z.output<In>): Result<Out> },
): Operation {
  const { run, ...fields } = entry;
  return erase<In, Out>({
    ...fields,
    auth: 'agent',
    agentKeyField: fields.http ? 'optional' : 'none',
    cost: FREE,
    run: (core, agent, input) => run(core, requireAgent(agent), input),
  });
}

/**
 * A free operation of the calling agent whose REST answer is a stream of NDJSON lines (`http.ndjsonAnswer`),
 * each as `output` says; REST only, since an MCP tool answers one result.
 */
export function streamOperation<In extends z.ZodType, Out extends z.ZodType>(
  entry: Omit<EntryFields<In, Out>, 'http' | 'mcp'> & {
    http: HttpRoute & { ndjsonAnswer: true };
    run(core: Core, agentId: string, input: z.output<In>): AsyncIterable<z.input<Out>>;
  },
): Operation {
  const { run, ...fields } = entry;
  return erase<In, Out>({
    ...fields,
    auth: 'agent',
    agentKeyField: 'optional',
    cost: FREE,
    // The faces read `http.ndjsonAnswer` and iterate the answer instead of sending it as one body.
    run: async (core, agent, input) => run(core, requireAgent(agent), input) as unknown as z.input<Out>,
  });
}

/** An entry built by `chargedOperation`, its ledger name kept in its type. */
export type ChargedOperation<N extends ChargedOperationName = ChargedOperationName> = Operation & {
  name: N;
  idempotent: true;
};

/**
 * The charged operations the spec defines, whose REST requests must repeat the key in `agent_key` (the
 * spec's rule). The service's own (batch, history, restore, import) accept it and do not need it: the key in
 * the header is enough, so that a page never has to put a key in a URL.
 */
const SPEC_CHARGED: ReadonlySet<ChargedOperationName> = new Set([
  'memory_store',
  'memory_retrieve',
  'memory_delete',
  'memory_search',
  'data',
]);

/**
 * An operation charged to the calling agent: the REST request repeats the key in `agent_key` (when the spec
 * defines the operation; see SPEC_CHARGED), an
 * idempotency key is honoured, and `run` receives the entry's `cost` and `name` as the charge, with the
 * idempotency recorder, so what is charged is what the table declares.
 */
export function chargedOperation<N extends ChargedOperationName, In extends z.ZodType, Out extends z.ZodType>(
  entry: EntryFields<In, Out> & {
    name: N;
    cost: Cost;
    run(core: Core, agentId: string, input: z.output<In>, ctx: ChargeContext): Result<Out>;
  },
): ChargedOperation<N> {
  const { run, ...fields } = entry;
  const charge = Object.freeze({ operation: entry.name, ...entry.cost });
  const op = erase<In, Out>({
    ...fields,
    auth: 'agent',
    agentKeyField: SPEC_CHARGED.has(entry.name) ? 'required' : 'optional',
    idempotent: true,
    run: (core, agent, input, idempotency, spentBy) => {
      const record = recorderFor(idempotency, spentBy);
      return run(core, requireAgent(agent), input, record === undefined ? { charge } : { charge, record });
    },
  });
  return op as ChargedOperation<N>;
}
