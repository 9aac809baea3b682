/**
 * The schemas of the operator's operations (admin.ts), built from the configured limits.
 */
import { z } from 'zod';
import type { Limits } from '../limits.js';
import { boundedInt, Cents, Email, ListCursor, NextCursor, PlanName, Timestamp } from './fields.js';

/** The most accounts one page of the operator's list holds. */
const ADMIN_ACCOUNTS_MAX = 200;

export function createAdminSchemas(limits: Limits) {
  return {
    AddCreditsInput: z.strictObject({
      email: Email,
      cents: boundedInt('cents', 1, limits.topUpMaxCents).describe('Cents to add to the balance.'),
    }),
    AddCreditsOutput: z.object({
      success: z.literal(true),
      email: z.string(),
      credited_cents: Cents,
      credit_balance_cents: Cents,
    }),

    AdminAccountsInput: z.strictObject({
      limit: boundedInt('limit', 1, ADMIN_ACCOUNTS_MAX, true)
        .default(50)
        .describe(`At most this many accounts (1-${ADMIN_ACCOUNTS_MAX}), in e-mail order.`),
      cursor: ListCursor,
      email: z
        .string('email must be a string')
        .trim()
        .toLowerCase()
        .max(254, 'email must be at most 254 characters')
        .optional()
        .describe('Only accounts whose e-mail contains this text (case ignored).'),
    }),
    AdminAccountsOutput: z.object({
      accounts: z.array(
        z.object({
          email: z.string(),
          name: z.string().nullable(),
          plan: PlanName,
          credit_balance_cents: Cents,
          created_at: Timestamp,
        }),
      ),
      total: z.int().describe('How many accounts match, on every page.'),
      next_cursor: NextCursor,
    }),

    AdminStatusInput: z.strictObject({}),
    AdminStatusOutput: z.object({
      providers: z
        .array(
          z.object({
            chain: z.string().describe('The chain: a query type, geocoding, or "<kind> price".'),
            id: z.string(),
            breaker: z.enum(['closed', 'open', 'half-open']),
            recent_failures: z
              .array(z.object({ at: Timestamp, message: z.string() }))
              .describe('The latest failures seen by this instance, newest first.'),
            tokens: z
              .object({ available: z.number(), capacity: z.number() })
              .describe("This instance's token bucket for the provider."),
          }),
        )
        .describe('Every provider of every chain, as this instance sees it.'),
      cache: z.object({
        entries: z
          .int()
          .describe(
            'Results the live-data cache holds (on PostgreSQL, expired ones until the sweep removes them).',
          ),
        day: z.string().describe('The UTC day the counts below are of (today).'),
        hits: z.int().describe('Answers served without a fetch for them today (hit, stale, shared_flight).'),
        misses: z.int().describe('Answers fetched from an upstream today.'),
        hit_rate: z.number().nullable().describe('hits / (hits + misses); null when there were none.'),
      }),
    }),

    SetPlanInput: z.strictObject({
      email: Email,
      plan: PlanName.describe(
        'pay-as-you-go: paid from the balance, refused when it runs short; unlimited: never refused for credit.',
      ),
    }),
    SetPlanOutput: z.object({
      success: z.literal(true),
      email: z.string(),
      plan: PlanName,
      previous_plan: PlanName,
      changed: z.boolean().describe('False when the account was on this plan already.'),
      credit_balance_cents: Cents,
    }),
  };
}

export type AdminSchemas = ReturnType<typeof createAdminSchemas>;
