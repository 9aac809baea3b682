/**
 * The operator's entries of the operation table (the AC_ADMIN_TOKEN, REST only): top-ups and plan changes,
 * found by e-mail. Their schemas are in admin.schemas.ts.
 */
import { adminOperation } from '../operation-kit.js';
import type { AdminSchemas } from './admin.schemas.js';

export function adminOperations(schemas: AdminSchemas) {
  return [
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
      name: 'admin_accounts',
      title: 'List accounts (operator)',
      http: { method: 'GET', path: '/api/ac/admin/accounts' },
      summary: 'Operator only: list accounts with their balances and plans.',
      description:
        'Lists accounts in e-mail order with balance and plan, those whose e-mail contains email when given, ' +
        'with the total; pass next_cursor as cursor for the next page. Needs ' +
        '"Authorization: Bearer <AC_ADMIN_TOKEN>"; answers 404 while the server has no admin token configured.',
      errors: ['invalid_input'],
      input: schemas.AdminAccountsInput,
      output: schemas.AdminAccountsOutput,
      run: (core, input) => core.operator.accounts(input),
    }),
    adminOperation({
      name: 'admin_status',
      title: 'Live-data health (operator)',
      http: { method: 'GET', path: '/api/ac/admin/status' },
      summary:
        "Operator only: providers' breakers, failures and token buckets; the cache's size and hit rate.",
      description:
        "Shows each live-data provider's circuit breaker, its latest failures and its token bucket as this " +
        "instance sees them, the cache's size, and how today's live-data answers were served (every " +
        'instance). Needs "Authorization: Bearer <AC_ADMIN_TOKEN>"; answers 404 while the server has no admin ' +
        'token configured.',
      errors: [],
      input: schemas.AdminStatusInput,
      output: schemas.AdminStatusOutput,
      run: (core) => core.operator.status(),
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
}
