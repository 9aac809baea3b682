/**
 * The operation table: every operation of the service declared once, with its HTTP method and path, its
 * MCP tool name and annotations, its schemas, its price and a description written for agents. The REST
 * routes, ping's `agent_api` map, the OpenAPI document, llms.txt and the MCP tools are all generated from
 * this table.
 */
import type { z } from 'zod';
import type { Core } from './core.js';
import type { ErrorCode } from './errors.js';
import type { Recorder } from './ledger.js';
import { PRICES } from './pricing.js';
import type { Schemas } from './schemas.js';

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

export interface Operation<In extends z.ZodType = z.ZodType, Out extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  /** The REST route; absent for an operation that only MCP offers. */
  http?: { method: HttpMethod; path: string };
  /** The MCP tool; absent for an operation that only REST offers (registration, the operator's). */
  mcp?: { tool: string; hints: ToolHints };
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
  /** Cents charged on success; `cachedCents` when the result may come from the cache. */
  cost: { cents: number; cachedCents?: number };
  /** One line. */
  summary: string;
  /** For agents: what it does, what it costs, what to do on failure. */
  description: string;
  /** Error codes this operation can answer besides the generic ones (400, 401, 500...). */
  errors: ErrorCode[];
  input: In;
  output: Out;
  /** `record` must receive the response inside the transaction that charges for it. */
  run(core: Core, agentId: string | undefined, input: z.output<In>, record?: Recorder): Promise<z.input<Out>>;
}

/** "Cost: 1 cents." or "Cost: 2 cents fresh, 0 when served from cache.": the one wording of a price. */
export function costSentence(op: Operation): string {
  return op.cost.cachedCents === undefined
    ? `Cost: ${op.cost.cents} cents.`
    : `Cost: ${op.cost.cents} cents fresh, ${op.cost.cachedCents} when served from cache.`;
}

/** Keeps each entry's input and output types tied to its `run` while the table holds them all. */
function define<In extends z.ZodType, Out extends z.ZodType>(op: Operation<In, Out>): Operation {
  return op as unknown as Operation;
}

/** The operations with a REST route. */
export function restOperations(operations: readonly Operation[]): RestOperation[] {
  return operations.filter((op): op is RestOperation => op.http !== undefined);
}

export type RestOperation = Operation & { http: NonNullable<Operation['http']> };

const READS: ToolHints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

function requireAgent(agentId: string | undefined): string {
  if (agentId === undefined) throw new Error('an agent operation ran without an authenticated agent');
  return agentId;
}

export function createOperations(schemas: Schemas): readonly Operation[] {
  const memoryOp = { cents: PRICES.memoryOp };
  return Object.freeze([
    define({
      name: 'register',
      title: 'Register',
      http: { method: 'POST', path: '/api/ac/register' },
      auth: 'none',
      agentKeyField: 'none',
      cost: { cents: 0 },
      summary: `Create an account and get an API key with ${PRICES.starterCredit} cents of starter credit.`,
      description:
        'Registers a new agent account for an e-mail address and returns its API key (shown only once: keep it) ' +
        `with ${PRICES.starterCredit} cents of starter credit. Free, no authentication. ` +
        'An e-mail that is already registered gets 409: use the key you were given.',
      errors: ['conflict'],
      input: schemas.RegisterInput,
      output: schemas.RegisterOutput,
      run: (core, _agent, input) => core.accounts.register(input),
    }),
    define({
      name: 'memory_store',
      mcp: { tool: 'memory_store', hints: { ...READS, readOnlyHint: false, destructiveHint: true } },
      title: 'Store memory',
      http: { method: 'POST', path: '/api/ac/memory' },
      auth: 'agent',
      agentKeyField: 'required',
      idempotent: true,
      cost: memoryOp,
      summary: 'Store a named memory, or update it if the key exists.',
      description:
        `Stores memory_value under memory_key for the calling agent; an existing key is updated (created_at kept). ` +
        `Costs ${PRICES.memoryOp} cent. On 402 the balance is too low; on 403 the memory quota is reached: ` +
        'delete memories you no longer need.',
      errors: ['insufficient_credits', 'daily_limit_reached', 'quota_exceeded', 'forbidden'],
      input: schemas.StoreInput,
      output: schemas.StoreOutput,
      run: (core, agent, input, record) => core.memories.storeMemory(requireAgent(agent), input, record),
    }),
    define({
      name: 'memory_retrieve',
      mcp: { tool: 'memory_retrieve', hints: READS },
      title: 'Retrieve memory',
      http: { method: 'GET', path: '/api/ac/memory' },
      auth: 'agent',
      agentKeyField: 'required',
      idempotent: true,
      cost: memoryOp,
      summary: 'Read one memory by its key.',
      description:
        `Returns the memory stored under memory_key. Costs ${PRICES.memoryOp} cent; a key that does not exist ` +
        'gets 404 and costs nothing: list your keys with memory_search.',
      errors: ['insufficient_credits', 'daily_limit_reached', 'not_found', 'forbidden'],
      input: schemas.RetrieveInput,
      output: schemas.RetrieveOutput,
      run: (core, agent, input, record) => core.memories.retrieveMemory(requireAgent(agent), input, record),
    }),
    define({
      name: 'memory_delete',
      mcp: { tool: 'memory_delete', hints: { ...READS, readOnlyHint: false, destructiveHint: true } },
      title: 'Delete memory',
      http: { method: 'DELETE', path: '/api/ac/memory' },
      auth: 'agent',
      agentKeyField: 'required',
      idempotent: true,
      cost: { cents: PRICES.memoryDelete },
      summary: 'Delete one memory by its key.',
      description:
        'Deletes the memory stored under memory_key. Free. A key that does not exist gets 404 (nothing changes).',
      errors: ['not_found', 'forbidden'],
      input: schemas.DeleteInput,
      output: schemas.DeleteOutput,
      run: (core, agent, input, record) => core.memories.deleteMemory(requireAgent(agent), input, record),
    }),
    define({
      name: 'memory_search',
      mcp: { tool: 'memory_search', hints: READS },
      title: 'List memories',
      http: { method: 'POST', path: '/api/ac/memory/search' },
      auth: 'agent',
      agentKeyField: 'required',
      idempotent: true,
      cost: memoryOp,
      summary: 'List the memories of the calling agent, optionally of one type.',
      description:
        'Lists your memories, most recently updated first, optionally only those of memory_type, at most limit ' +
        `(default 50, 1-100). Takes no text query. Costs ${PRICES.memoryOp} cent.`,
      errors: ['insufficient_credits', 'daily_limit_reached', 'forbidden'],
      input: schemas.SearchInput,
      output: schemas.SearchOutput,
      run: (core, agent, input, record) => core.memories.searchMemories(requireAgent(agent), input, record),
    }),
    define({
      name: 'data',
      mcp: { tool: 'data_fetch', hints: { ...READS, idempotentHint: false, openWorldHint: true } },
      title: 'Fetch live data',
      http: { method: 'POST', path: '/api/ac/data' },
      auth: 'agent',
      agentKeyField: 'required',
      idempotent: true,
      cost: { cents: PRICES.liveDataFresh, cachedCents: PRICES.liveDataCached },
      summary: 'Fetch news, web search results, current weather or an asset price.',
      description:
        'Fetches live data for query: query_type news (latest articles), search (web results), weather (a city) ' +
        `or price (a coin or an ISO currency code, optionally "in eur"). Costs ${PRICES.liveDataFresh} cents ` +
        `when fetched fresh; free when served from the shared cache, which is used when its result is at most ` +
        'cache_minutes old (default 15; 0 always fetches fresh). 404: no such city or asset, check the spelling. ' +
        '502/504: the upstream failed or timed out; nothing was charged, retry later.',
      errors: [
        'insufficient_credits',
        'daily_limit_reached',
        'not_found',
        'forbidden',
        'upstream_failed',
        'upstream_timeout',
        'max_cost_exceeded',
      ],
      input: schemas.DataInput,
      output: schemas.DataOutput,
      run: (core, agent, input, record) => core.liveData.fetchData(requireAgent(agent), input, record),
    }),
    define({
      name: 'account',
      title: 'Account',
      http: { method: 'GET', path: '/api/ac/account' },
      auth: 'agent',
      agentKeyField: 'optional',
      cost: { cents: 0 },
      summary: 'Show the account: e-mail, name, plan and balance.',
      description: 'Returns the calling account with its credit balance. Free.',
      errors: ['forbidden'],
      input: schemas.AccountInput,
      output: schemas.AccountOutput,
      run: (core, agent) => core.accounts.info(requireAgent(agent)),
    }),
    define({
      name: 'account_rotate_key',
      title: 'Rotate API key',
      http: { method: 'POST', path: '/api/ac/account/rotate-key' },
      auth: 'agent',
      agentKeyField: 'optional',
      cost: { cents: 0 },
      summary: 'Replace the API key with a new one; the old key stops working at once.',
      description:
        'Issues a new API key for the calling account and invalidates the key used for this request in the ' +
        'same step; balance, ledger and memories stay. The new key is shown once: store it before anything ' +
        'else. Free. REST only: an MCP client would lose its own key mid-session.',
      errors: ['forbidden'],
      input: schemas.RotateKeyInput,
      output: schemas.RotateKeyOutput,
      run: (core, agent) => core.accounts.rotateKey(requireAgent(agent)),
    }),
    define({
      name: 'account_transactions',
      title: 'Ledger entries',
      http: { method: 'GET', path: '/api/ac/account/transactions' },
      auth: 'agent',
      agentKeyField: 'optional',
      cost: { cents: 0 },
      summary: 'List the ledger entries of the account, newest first.',
      description:
        'Returns credits and debits of the calling account, newest first, each with the balance after it and ' +
        'the memory_key or query it concerned. Free.',
      errors: ['forbidden'],
      input: schemas.TransactionsInput,
      output: schemas.TransactionsOutput,
      run: (core, agent, input) => core.accounts.transactions(requireAgent(agent), input),
    }),
    define({
      name: 'account_info',
      title: 'Account and recent charges',
      mcp: { tool: 'account_info', hints: READS },
      auth: 'agent',
      agentKeyField: 'none',
      cost: { cents: 0 },
      summary: 'Show the balance, plan and recent ledger entries of the calling agent.',
      description:
        'Returns your credit balance in cents, your plan and your most recent ledger entries (credits and ' +
        'debits, newest first, at most limit, default 10). Free: call it before paid work to check the balance.',
      errors: [],
      input: schemas.AccountInfoInput,
      output: schemas.AccountInfoOutput,
      run: (core, agent, input) => core.accounts.accountInfo(requireAgent(agent), input),
    }),
    define({
      name: 'admin_credits',
      title: 'Add credits (operator)',
      http: { method: 'POST', path: '/api/ac/admin/credits' },
      auth: 'admin',
      agentKeyField: 'none',
      cost: { cents: 0 },
      summary: 'Operator only: add credit to an account by e-mail.',
      description:
        'Adds cents to the balance of the account registered with email, as a top_up ledger entry. Needs ' +
        '"Authorization: Bearer <AC_ADMIN_TOKEN>"; answers 404 while the server has no admin token configured.',
      errors: ['not_found'],
      input: schemas.AddCreditsInput,
      output: schemas.AddCreditsOutput,
      run: (core, _agent, input) => core.accounts.addCredits(input),
    }),
    define({
      name: 'admin_plan',
      title: 'Change plan (operator)',
      http: { method: 'POST', path: '/api/ac/admin/plan' },
      auth: 'admin',
      agentKeyField: 'none',
      cost: { cents: 0 },
      summary: 'Operator only: move an account to the pay-as-you-go or the unlimited plan.',
      description:
        'Moves the account registered with email to plan: pay-as-you-go (paid from the balance, refused with ' +
        '402 when it runs short) or unlimited (never refused for credit; each charge is still recorded with ' +
        'its cost). Recorded as a plan_change ledger entry of 0 cents. Needs ' +
        '"Authorization: Bearer <AC_ADMIN_TOKEN>"; answers 404 while the server has no admin token configured.',
      errors: ['not_found'],
      input: schemas.SetPlanInput,
      output: schemas.SetPlanOutput,
      run: (core, _agent, input) => core.accounts.setPlan(input),
    }),
  ]);
}
