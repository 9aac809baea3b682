/**
 * The schemas of the account operations (account.ts): registration, the calling account, its key and its
 * ledger entries, built from the configured limits.
 */
import { z } from 'zod';
import { EMAIL_PART_LENGTHS, emailDomain, isDisposableDomain } from '../email.js';
import type { Limits } from '../limits.js';
import { USAGE_DAYS_KEPT } from '../model.js';
import {
  boundedInt,
  Cents,
  Email,
  ListCursor,
  NextCursor,
  PlanName,
  Timestamp,
  UTF16_UNITS,
} from './fields.js';

/**
 * A new account's address: also within RFC 5321's part lengths, and not at a disposable-address provider
 * (a list, so said in the description only).
 */
const RegisterEmail = Email.regex(EMAIL_PART_LENGTHS, {
  message: 'email must have at most 64 characters before the @ and at most 63 in each part of the domain',
  abort: true,
})
  .refine((email) => !isDisposableDomain(emailDomain(email)), {
    error: (issue) =>
      `email is at ${emailDomain(String(issue.input))}, a disposable (throwaway) address provider; ` +
      'register with a permanent address you control',
  })
  // A second pattern replaces the published `format: email` with zod's "regex" format: keep it.
  .meta({
    format: 'email',
    description:
      'E-mail address of the account (trimmed and lower-cased); not at a disposable (throwaway) address ' +
      'provider.',
  });

/** The most days the usage endpoint shows: the days whose counts are kept. */
const USAGE_DAYS_MAX = USAGE_DAYS_KEPT;

/** One ledger entry. */
const Transaction = z.object({
  id: z.string(),
  at: Timestamp,
  operation: z.string(),
  amount_cents: Cents.describe(
    'The change of the balance: positive for credits, negative for charges paid from the balance, 0 for ' +
      'charges covered by the unlimited plan and for plan changes.',
  ),
  balance_after_cents: Cents,
  cost_cents: Cents.optional().describe('On a charge: what the operation cost, whoever paid it.'),
  plan: PlanName.optional().describe('The plan that covered a charge, or the new plan of a plan_change.'),
  memory_key: z.string().optional(),
  query_type: z.string().optional(),
  query: z.string().optional(),
  client: z
    .string()
    .optional()
    .describe(
      'On a charge made with an OAuth access token: the id of the client that spent it (its Client ID ' +
        'Metadata Document URL, or the id it was given at registration).',
    ),
});

export function createAccountSchemas(limits: Limits) {
  return {
    RegisterInput: z.strictObject({
      email: RegisterEmail,
      name: z
        .string()
        .max(limits.nameMaxChars, `name must be at most ${limits.nameMaxChars} characters`)
        .optional()
        .describe(
          `Optional display name of the agent; at most ${limits.nameMaxChars} characters (${UTF16_UNITS}).`,
        ),
    }),
    RegisterOutput: z.object({
      agent_key: z.string().describe('The API key. Shown once: keep it.'),
      credit_balance_cents: Cents,
      plan: PlanName,
      email: z.string(),
      name: z.string().nullable(),
      created_at: Timestamp,
    }),

    RotateKeyInput: z.strictObject({}),
    RotateKeyOutput: z.object({
      agent_key: z.string().describe('The new API key. Shown once: keep it. The old key no longer works.'),
      credit_balance_cents: Cents,
      plan: PlanName,
      rotated_at: Timestamp,
    }),

    AccountInput: z.strictObject({}),
    AccountOutput: z.object({
      email: z.string(),
      name: z.string().nullable(),
      plan: PlanName,
      credit_balance_cents: Cents,
      created_at: Timestamp,
    }),

    AccountInfoInput: z.strictObject({
      limit: boundedInt('limit', 1, limits.transactionsLimitMax)
        .default(limits.accountInfoLimitDefault)
        .describe(`At most this many recent ledger entries (1-${limits.transactionsLimitMax}).`),
    }),
    AccountInfoOutput: z.object({
      email: z.string(),
      name: z.string().nullable(),
      plan: PlanName,
      credit_balance_cents: Cents,
      created_at: Timestamp,
      recent_transactions: z.array(Transaction).describe('Newest first.'),
    }),

    TransactionsInput: z.strictObject({
      limit: boundedInt('limit', 1, limits.transactionsLimitMax, true)
        .default(limits.transactionsLimitDefault)
        .describe(`At most this many entries (1-${limits.transactionsLimitMax}), newest first.`),
      cursor: ListCursor,
    }),
    TransactionsOutput: z.object({
      transactions: z.array(Transaction),
      count: z.int(),
      credit_balance_cents: Cents,
      next_cursor: NextCursor,
    }),

    UsageInput: z.strictObject({
      days: boundedInt('days', 1, USAGE_DAYS_MAX, true)
        .default(30)
        .describe(`How many UTC days to show, today included (1-${USAGE_DAYS_MAX}).`),
    }),
    UsageOutput: z.object({
      since: Timestamp.describe('Midnight UTC at the start of the first day shown.'),
      days: z
        .array(z.object({ date: z.string(), spent_cents: Cents, charges: z.int() }))
        .describe('One entry per UTC day, oldest first, today last; days without charges show 0.'),
      operations: z
        .array(z.object({ operation: z.string(), charges: z.int(), spent_cents: Cents }))
        .describe('Charges over the days shown, per operation, the most spent first.'),
      today: z.object({
        date: z.string(),
        spent_cents: Cents,
        daily_limit_cents: Cents.nullable().describe("The plan's daily spending limit; null: none."),
        resets_at: Timestamp,
      }),
      live_data: z
        .object({
          answers: z.int(),
          fresh: z.int().describe('Fetched from an upstream for the request (charged).'),
          hit: z.int().describe('Served from the cache.'),
          stale: z.int().describe('An older cached result, served because the upstreams failed.'),
          shared_flight: z.int().describe("Another request's fetch, joined while in flight."),
          cache_hit_rate: z
            .number()
            .nullable()
            .describe(
              'Share of answers not fetched for the request (hit, stale, shared_flight); null: none.',
            ),
        })
        .describe('Live-data answers over the days shown, by cache_state (counted within seconds).'),
      credit_balance_cents: Cents,
      plan: PlanName,
    }),
  };
}

export type AccountSchemas = ReturnType<typeof createAccountSchemas>;
