/**
 * The schemas of the account operations (account.ts): registration, the calling account, its key and its
 * ledger entries, built from the configured limits.
 */
import { z } from 'zod';
import { EMAIL_PART_LENGTHS, emailDomain, isDisposableDomain } from '../email.js';
import type { Limits } from '../limits.js';
import { boundedInt, Cents, Email, PlanName, Timestamp, UTF16_UNITS } from './fields.js';

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
    }),
    TransactionsOutput: z.object({
      transactions: z.array(Transaction),
      count: z.int(),
      credit_balance_cents: Cents,
    }),
  };
}

export type AccountSchemas = ReturnType<typeof createAccountSchemas>;
