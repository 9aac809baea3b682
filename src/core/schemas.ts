/**
 * The zod schemas of every operation's input and output, shared by every face (REST bodies, MCP tool
 * schemas, the OpenAPI document), assembled from the domains' factories beside their table entries
 * (operations/*.schemas.ts; the shared building blocks in operations/fields.ts). Built from the configured
 * limits, so a changed limit shows everywhere. A domain's schemas and its entries are two files because
 * the entries import operation-kit.ts, which reaches this module through core.ts: one file would be a cycle.
 */
import type { z } from 'zod';
import type { Limits } from './limits.js';
import { createAccountSchemas } from './operations/account.schemas.js';
import { createAdminSchemas } from './operations/admin.schemas.js';
import { createLiveDataSchemas } from './operations/live-data.schemas.js';
import { createMemorySchemas } from './operations/memory.schemas.js';

export function createSchemas(limits: Limits) {
  return {
    /** The limits these schemas were built from, for descriptions that state a default or a range. */
    limits,
    ...createAccountSchemas(limits),
    ...createMemorySchemas(limits),
    ...createLiveDataSchemas(limits),
    ...createAdminSchemas(limits),
  };
}

export type Schemas = ReturnType<typeof createSchemas>;
export type Input<K extends keyof Schemas> = z.output<Schemas[K]>;
export type Output<K extends keyof Schemas> = z.input<Schemas[K]>;
