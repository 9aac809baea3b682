/**
 * The operation table: every operation of the service declared once, with its HTTP method and path, its
 * MCP tool name and annotations, its schemas, its price and a description written for agents. The REST
 * routes, ping's `agent_api` map, the OpenAPI document, llms.txt and the MCP tools are all generated from
 * this table.
 */
import type { ChargedOperationName } from './model.js';
import {
  adminOperation,
  agentOperation,
  type ChargedOperation,
  chargedOperation,
  type Operation,
  publicOperation,
  READS,
} from './operation-kit.js';
import { PRICES } from './pricing.js';
import type { Schemas } from './schemas.js';

export {
  type Auth,
  type Cost,
  costFigures,
  costSentence,
  type HttpMethod,
  type Operation,
  type RestOperation,
  restOperations,
  type ToolHints,
} from './operation-kit.js';

/**
 * Whether the table holds a charged entry for every name of `CHARGED_OPERATIONS` (model.ts): `true` when it
 * does, otherwise the names it lacks. `chargedOperation` takes no other name, so the two are the same set.
 */
type EveryChargedNameHasAnEntry<Entries> = [ChargedOperationName] extends [
  Extract<Entries, ChargedOperation>['name'],
]
  ? true
  : Exclude<ChargedOperationName, Extract<Entries, ChargedOperation>['name']>;

export function createOperations(schemas: Schemas): readonly Operation[] {
  const { limits } = schemas;
  const memoryOp = { cents: PRICES.memoryOp };
  const table = [
    publicOperation({
      name: 'register',
      title: 'Register',
      http: { method: 'POST', path: '/api/ac/register' },
      summary: `Create an account and get an API key with ${PRICES.starterCredit} cents of starter credit.`,
      description:
        'Registers a new agent account for an e-mail address and returns its API key (shown only once: keep it) ' +
        `with ${PRICES.starterCredit} cents of starter credit. Free, no authentication. ` +
        'An e-mail that is already registered gets 409: use the key you were given.',
      errors: ['conflict'],
      input: schemas.RegisterInput,
      output: schemas.RegisterOutput,
      run: (core, input) => core.accounts.register(input),
    }),
    chargedOperation({
      name: 'memory_store',
      mcp: { tool: 'memory_store', hints: { ...READS, readOnlyHint: false, destructiveHint: true } },
      title: 'Store memory',
      http: { method: 'POST', path: '/api/ac/memory' },
      cost: memoryOp,
      summary: 'Store a named memory, or update it if the key exists.',
      description:
        'Stores memory_value under memory_key for the calling agent; an existing key is updated (created_at kept). ' +
        'On 402 the balance is too low; on 403 the memory quota is reached: delete memories you no longer need.',
      errors: ['insufficient_credits', 'daily_limit_reached', 'quota_exceeded', 'forbidden'],
      input: schemas.StoreInput,
      output: schemas.StoreOutput,
      run: (core, agent, input, ctx) => core.memories.storeMemory(agent, input, ctx),
    }),
    chargedOperation({
      name: 'memory_retrieve',
      mcp: { tool: 'memory_retrieve', hints: READS },
      title: 'Retrieve memory',
      http: { method: 'GET', path: '/api/ac/memory' },
      cost: memoryOp,
      summary: 'Read one memory by its key.',
      description:
        'Returns the memory stored under memory_key. A key that does not exist gets 404 and costs nothing: ' +
        'list your keys with memory_search.',
      errors: ['insufficient_credits', 'daily_limit_reached', 'not_found', 'forbidden'],
      input: schemas.RetrieveInput,
      output: schemas.RetrieveOutput,
      run: (core, agent, input, ctx) => core.memories.retrieveMemory(agent, input, ctx),
    }),
    chargedOperation({
      name: 'memory_delete',
      mcp: { tool: 'memory_delete', hints: { ...READS, readOnlyHint: false, destructiveHint: true } },
      title: 'Delete memory',
      http: { method: 'DELETE', path: '/api/ac/memory' },
      cost: { cents: PRICES.memoryDelete },
      summary: 'Delete one memory by its key.',
      description:
        'Deletes the memory stored under memory_key. A key that does not exist gets 404 (nothing changes).',
      errors: ['not_found', 'forbidden'],
      input: schemas.DeleteInput,
      output: schemas.DeleteOutput,
      run: (core, agent, input, ctx) => core.memories.deleteMemory(agent, input, ctx),
    }),
    chargedOperation({
      name: 'memory_search',
      mcp: { tool: 'memory_search', hints: READS },
      title: 'List memories',
      http: { method: 'POST', path: '/api/ac/memory/search' },
      cost: memoryOp,
      summary: 'List the memories of the calling agent, optionally of one type.',
      description:
        'Lists your memories, most recently updated first, optionally only those of memory_type, at most limit ' +
        `(default ${limits.searchLimitDefault}, 1-${limits.searchLimitMax}). Takes no text query.`,
      errors: ['insufficient_credits', 'daily_limit_reached', 'forbidden'],
      input: schemas.SearchInput,
      output: schemas.SearchOutput,
      run: (core, agent, input, ctx) => core.memories.searchMemories(agent, input, ctx),
    }),
    chargedOperation({
      name: 'data',
      mcp: { tool: 'data_fetch', hints: { ...READS, idempotentHint: false, openWorldHint: true } },
      title: 'Fetch live data',
      http: { method: 'POST', path: '/api/ac/data' },
      cost: { cents: PRICES.liveDataFresh, cachedCents: PRICES.liveDataCached },
      summary: 'Fetch news, web search results, current weather or an asset price.',
      description:
        'Fetches live data for query: query_type news (latest articles), search (web results), weather (a city) ' +
        'or price (a coin or an ISO currency code, optionally "in eur"). Served from the shared cache, at the ' +
        'cached price, when its result is at most cache_minutes old ' +
        `(default ${limits.cacheMinutesDefault}, 0-${limits.cacheMinutesMax}; 0 always fetches fresh). ` +
        '404: no such city or asset, check the spelling. ' +
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
      run: (core, agent, input, ctx) => core.liveData.fetchData(agent, input, ctx),
    }),
    agentOperation({
      name: 'account',
      title: 'Account',
      http: { method: 'GET', path: '/api/ac/account' },
      summary: 'Show the account: e-mail, name, plan and balance.',
      description: 'Returns the calling account with its credit balance. Free.',
      errors: ['forbidden'],
      input: schemas.AccountInput,
      output: schemas.AccountOutput,
      run: (core, agent) => core.accounts.info(agent),
    }),
    agentOperation({
      name: 'account_rotate_key',
      title: 'Rotate API key',
      http: { method: 'POST', path: '/api/ac/account/rotate-key' },
      summary: 'Replace the API key with a new one; the old key stops working at once.',
      description:
        'Issues a new API key for the calling account and invalidates the key used for this request in the ' +
        'same step; balance, ledger and memories stay. The new key is shown once: store it before anything ' +
        'else. Free. REST only: an MCP client would lose its own key mid-session.',
      errors: ['forbidden'],
      input: schemas.RotateKeyInput,
      output: schemas.RotateKeyOutput,
      run: (core, agent) => core.accounts.rotateKey(agent),
    }),
    agentOperation({
      name: 'account_transactions',
      title: 'Ledger entries',
      http: { method: 'GET', path: '/api/ac/account/transactions' },
      summary: 'List the ledger entries of the account, newest first.',
      description:
        'Returns credits and debits of the calling account, newest first, each with the balance after it and ' +
        'the memory_key or query it concerned. Free.',
      errors: ['forbidden'],
      input: schemas.TransactionsInput,
      output: schemas.TransactionsOutput,
      run: (core, agent, input) => core.accounts.transactions(agent, input),
    }),
    agentOperation({
      name: 'account_info',
      title: 'Account and recent charges',
      mcp: { tool: 'account_info', hints: READS },
      summary: 'Show the balance, plan and recent ledger entries of the calling agent.',
      description:
        'Returns your credit balance in cents, your plan and your most recent ledger entries (credits and ' +
        `debits, newest first, at most limit, default ${limits.accountInfoLimitDefault}). Free: call it before ` +
        'paid work to check the balance.',
      errors: [],
      input: schemas.AccountInfoInput,
      output: schemas.AccountInfoOutput,
      run: (core, agent, input) => core.accounts.accountInfo(agent, input),
    }),
    adminOperation({
      name: 'admin_credits',
      title: 'Add credits (operator)',
      http: { method: 'POST', path: '/api/ac/admin/credits' },
      summary: 'Operator only: add credit to an account by e-mail.',
      description:
        'Adds cents to the balance of the account registered with email, as a top_up ledger entry. Needs ' +
        '"Authorization: Bearer <AC_ADMIN_TOKEN>"; answers 404 while the server has no admin token configured.',
      errors: ['not_found'],
      input: schemas.AddCreditsInput,
      output: schemas.AddCreditsOutput,
      run: (core, input) => core.accounts.addCredits(input),
    }),
    adminOperation({
      name: 'admin_plan',
      title: 'Change plan (operator)',
      http: { method: 'POST', path: '/api/ac/admin/plan' },
      summary: 'Operator only: move an account to the pay-as-you-go or the unlimited plan.',
      description:
        'Moves the account registered with email to plan: pay-as-you-go (paid from the balance, refused with ' +
        '402 when it runs short) or unlimited (never refused for credit; each charge is still recorded with ' +
        'its cost). Recorded as a plan_change ledger entry of 0 cents. Needs ' +
        '"Authorization: Bearer <AC_ADMIN_TOKEN>"; answers 404 while the server has no admin token configured.',
      errors: ['not_found'],
      input: schemas.SetPlanInput,
      output: schemas.SetPlanOutput,
      run: (core, input) => core.accounts.setPlan(input),
    }),
  ] as const;
  const complete: EveryChargedNameHasAnEntry<(typeof table)[number]> = true;
  void complete;
  return Object.freeze([...table]);
}
