/**
 * Confirmation of a destructive tool call (the table's `mcp.confirm`) where the client can give it in the same
 * call: MCP 2026-07-28's multi-round-trip requests. The first round answers `input_required` with one form
 * elicitation and runs nothing (so charges nothing); the client asks the person and retries the call with the
 * answer. A 2025-era client, or one that did not declare elicitation, is not asked: its call runs as before.
 */
import {
  acceptedContent,
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Operation } from '../core/operation-table.js';
import { envelopeOf, type McpExtra } from './mcp-extra.js';

const INPUT_KEY = 'confirm';
const Confirmation = z.object({
  confirm: z
    .boolean()
    .meta({ title: 'Go ahead', description: 'true to go ahead; false to leave it as it is.' }),
});

export type ConfirmationOutcome =
  | { kind: 'proceed' }
  | { kind: 'ask'; result: InputRequiredResult }
  | { kind: 'declined' };

/**
 * Whether this request's client declared it can answer a form elicitation (2026-07-28 envelope): `elicitation`
 * with `form`, or empty (which means form). A client of URL elicitation only cannot answer this question.
 */
function canElicit(extra: McpExtra): boolean {
  const capabilities = envelopeOf(extra)?.[CLIENT_CAPABILITIES_META_KEY] as
    | { elicitation?: Record<string, unknown> }
    | undefined;
  const elicitation = capabilities?.elicitation;
  if (elicitation === undefined || elicitation === null || typeof elicitation !== 'object') return false;
  return Object.keys(elicitation).length === 0 || elicitation.form !== undefined;
}

/** What to do with a call of `op` with `input`: run it, ask first, or stop because the person said no. */
export function confirmationFor(op: Operation, input: unknown, extra: McpExtra): ConfirmationOutcome {
  const question = op.mcp?.confirm?.(input);
  if (question === undefined || !canElicit(extra)) return { kind: 'proceed' };
  const answer = inputResponse(extra.mcpReq.inputResponses, INPUT_KEY);
  if (answer.kind === 'elicit' && answer.action !== 'accept') return { kind: 'declined' };
  const accepted = acceptedContent(extra.mcpReq.inputResponses, INPUT_KEY, Confirmation);
  if (accepted?.confirm === true) return { kind: 'proceed' };
  if (accepted?.confirm === false) return { kind: 'declined' };
  return {
    kind: 'ask',
    result: inputRequired({
      inputRequests: {
        [INPUT_KEY]: inputRequired.elicit({ message: question, requestedSchema: Confirmation }),
      },
    }),
  };
}
