/**
 * The account operations' entries of the operation table, all free: registration (no key), and the calling
 * agent's account, key rotation and ledger entries. Their schemas are in account.schemas.ts.
 */
import type { Limits } from '../limits.js';
import { agentOperation, publicOperation, READS } from '../operation-kit.js';
import { PRICES } from '../pricing.js';
import type { AccountSchemas } from './account.schemas.js';

/** Registration: the table's first entry, apart from the others because it needs no key. */
export function registrationOperations(schemas: AccountSchemas) {
  return [
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
  ] as const;
}

/** The calling agent's own account. */
export function accountOperations(schemas: AccountSchemas, limits: Limits) {
  return [
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
      summary: 'List the ledger entries of the account, newest first, page by page.',
      description:
        'Returns credits and debits of the calling account, newest first, each with the balance after it and ' +
        'the memory_key or query it concerned; pass next_cursor as cursor for the next page. Free.',
      errors: ['forbidden', 'invalid_input'],
      input: schemas.TransactionsInput,
      output: schemas.TransactionsOutput,
      run: (core, agent, input) => core.accounts.transactions(agent, input),
    }),
    agentOperation({
      name: 'account_usage',
      title: 'Usage',
      http: { method: 'GET', path: '/api/ac/account/usage' },
      summary: 'Show spending per day and per operation, and how live data was served.',
      description:
        'Returns what the calling account spent on each UTC day of the last days (default 30, today last) and ' +
        "per operation, today's spend against the daily limit, and how many live-data answers were fetched " +
        'fresh or served from the cache (the cache-hit rate). Also the MCP resource ac://usage. Free.',
      errors: ['forbidden'],
      input: schemas.UsageInput,
      output: schemas.UsageOutput,
      run: (core, agent, input) => core.usage.summary(agent, input),
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
  ] as const;
}
