/**
 * llms.txt: the API in plain Markdown for language models, generated from the operation table.
 */
import { costFigures, type RestOperation } from '../core/operation-table.js';
import { PRICES, SERVICE_NAME, SERVICE_VERSION } from '../core/pricing.js';
import { AUTH_DESCRIPTION, agentFacing, type DocumentContext, WEB_PAGES } from './document-context.js';
import { jsonSchema } from './openapi.js';

function fieldLines(op: RestOperation): string[] {
  const schema = jsonSchema(op.input, 'input');
  const properties = (schema.properties ?? {}) as Record<
    string,
    { type?: string; enum?: unknown[]; description?: string }
  >;
  const required = new Set((schema.required as string[]) ?? []);
  const lines: string[] = [];
  if (op.agentKeyField !== 'none') {
    lines.push(`- agent_key (string, ${op.agentKeyField}): your API key, the same as in the header`);
  }
  for (const [name, prop] of Object.entries(properties)) {
    const type = prop.enum ? prop.enum.map((v) => JSON.stringify(v)).join(' | ') : (prop.type ?? 'any');
    lines.push(
      `- ${name} (${type}, ${required.has(name) ? 'required' : 'optional'}): ${prop.description ?? ''}`,
    );
  }
  return lines.length ? lines : ['- (no fields)'];
}

/** The price of every operation that has one, from the table; the rest are free. */
function pricingLines(ctx: DocumentContext): string[] {
  const operations = agentFacing(ctx.operations);
  const priced = operations.filter((op) => op.cost.cents > 0 || (op.cost.cachedCents ?? 0) > 0);
  const lines = priced.map((op) => `- ${op.name}: ${costFigures(op.cost)}`);
  if (priced.length < operations.length) lines.push('- every other operation: free');
  return lines;
}

export function buildLlmsTxt(ctx: DocumentContext): string {
  const out = [
    `# ${SERVICE_NAME} ${SERVICE_VERSION}`,
    '',
    '> Persistent named text memories and live data (news, web search, weather, asset prices) for AI agents, ' +
      'behind one API key and one prepaid balance in cents.',
    '',
    `Base URL: ${ctx.baseUrl}. All bodies are JSON. OpenAPI: ${ctx.baseUrl}/api/ac/openapi.json`,
    '',
    '## Authentication',
    '',
    AUTH_DESCRIPTION,
    '',
    '## Pricing (cents)',
    '',
    ...pricingLines(ctx),
    `- starter credit at registration: ${PRICES.starterCredit}`,
    '- a request that fails is never charged',
    '',
    '## Errors',
    '',
    'Every error is a JSON object {"error": "<what was wrong and what to do>", "code": "<stable code>", ...}. ' +
      '400 bad input, 401 missing or unknown key, 402 not enough credit (with required_cents and ' +
      'credit_balance_cents), 403 agent_key differs from the header key or memory quota reached, 404 not found, ' +
      '409 e-mail already registered, 413 body too large, 415 body not JSON, 502/504 upstream failed or timed out.',
    '',
    '## Pages for people',
    '',
    ...WEB_PAGES.map((page) => `- ${ctx.baseUrl}${page.path}: ${page.summary}`),
    '',
    '## Operations',
  ];
  for (const doc of ctx.documents) out.push('', `### ${doc.name}`, '', `GET ${doc.path}: ${doc.summary}`);
  for (const op of agentFacing(ctx.operations)) {
    out.push(
      '',
      `### ${op.name}`,
      '',
      `${op.http.method} ${op.http.path} (cost: ${costFigures(op.cost)} cents)`,
      '',
      op.description,
    );
    out.push('', ...fieldLines(op));
  }
  return `${out.join('\n')}\n`;
}
