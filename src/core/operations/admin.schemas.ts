/**
 * The schemas of the operator's operations (admin.ts), built from the configured limits.
 */
import { z } from 'zod';
import type { Limits } from '../limits.js';
import { boundedInt, Cents, Email, PlanName } from './fields.js';

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
