/**
 * The memory operations' entries of the operation table: store, retrieve, delete and list the calling
 * agent's named memories, each charged. Their schemas are in memory.schemas.ts.
 */
import { describeDuration } from '../duration.js';
import type { Limits } from '../limits.js';
import { chargedOperation, READS, streamOperation } from '../operation-kit.js';
import { PRICES } from '../pricing.js';
import { BATCH_MAX, type MemorySchemas } from './memory.schemas.js';

export function memoryOperations(schemas: MemorySchemas, limits: Limits) {
  const memoryOp = { cents: PRICES.memoryOp };
  return [
    chargedOperation({
      name: 'memory_store',
      mcp: { tool: 'memory_store', hints: { ...READS, readOnlyHint: false, destructiveHint: true } },
      title: 'Store memory',
      http: { method: 'POST', path: '/api/ac/memory', ifMatch: true, ifNoneMatch: true, etag: true },
      cost: memoryOp,
      summary: 'Store a named memory, or update it if the key exists.',
      description:
        'Stores memory_value under memory_key for the calling agent; an existing key is updated (created_at kept, ' +
        'version one more). With expected_version it writes only over that version, with create_only only a new ' +
        'key: otherwise 412 version_conflict with current_version, free. ' +
        'On 402 the balance is too low; on 403 the memory quota is reached: delete memories you no longer need.',
      errors: [
        'insufficient_credits',
        'daily_limit_reached',
        'quota_exceeded',
        'version_conflict',
        'forbidden',
      ],
      input: schemas.StoreInput,
      output: schemas.StoreOutput,
      run: (core, agent, input, ctx) => core.memories.storeMemory(agent, input, ctx),
    }),
    chargedOperation({
      name: 'memory_store_batch',
      mcp: { tool: 'memory_store_batch', hints: { ...READS, readOnlyHint: false, destructiveHint: true } },
      title: 'Store memories (batch)',
      http: { method: 'POST', path: '/api/ac/memory/batch' },
      cost: { ...memoryOp, per: 'memory' },
      summary: `Store up to ${BATCH_MAX} memories in one call: all of them, or none.`,
      description:
        `Stores each of memories (1-${BATCH_MAX}, each as memory_store takes it, each memory_key once) in one ` +
        'step: all are stored, or none and nothing is charged. The first that fails (412 on its expected_version ' +
        'or create_only, 403 past the quota) fails the batch and names its memory_key; 402 when the balance ' +
        'cannot pay for all of them.',
      errors: [
        'insufficient_credits',
        'daily_limit_reached',
        'quota_exceeded',
        'version_conflict',
        'forbidden',
      ],
      input: schemas.StoreBatchInput,
      output: schemas.StoreBatchOutput,
      run: (core, agent, input, ctx) => core.memories.storeBatch(agent, input, ctx),
    }),
    chargedOperation({
      name: 'memory_retrieve',
      mcp: { tool: 'memory_retrieve', hints: READS },
      title: 'Retrieve memory',
      http: { method: 'GET', path: '/api/ac/memory', etag: true },
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
      mcp: {
        tool: 'memory_delete',
        hints: { ...READS, readOnlyHint: false, destructiveHint: true },
        confirm: (input: { memory_key: string }) =>
          `Delete the memory "${input.memory_key}"? (memory_restore can bring a version back from its history.)`,
      },
      title: 'Delete memory',
      http: { method: 'DELETE', path: '/api/ac/memory', ifMatch: true },
      cost: { cents: PRICES.memoryDelete },
      summary: 'Delete one memory by its key.',
      description:
        'Deletes the memory stored under memory_key. A key that does not exist gets 404 (nothing changes). ' +
        'With expected_version it deletes only that version: otherwise 412 version_conflict with current_version.',
      errors: ['not_found', 'version_conflict', 'forbidden'],
      input: schemas.DeleteInput,
      output: schemas.DeleteOutput,
      run: (core, agent, input, ctx) => core.memories.deleteMemory(agent, input, ctx),
    }),
    chargedOperation({
      name: 'memory_search',
      mcp: { tool: 'memory_search', hints: READS },
      title: 'Search memories',
      http: { method: 'POST', path: '/api/ac/memory/search' },
      cost: memoryOp,
      summary: 'List or search the memories of the calling agent, with filters and pages.',
      description:
        'Lists your memories, most recently updated first, at most limit per page ' +
        `(default ${limits.searchLimitDefault}, 1-${limits.searchLimitMax}); optionally only those of memory_type. ` +
        'With query, searches their keys, values and metadata values and ranks them, best first, each with a ' +
        'score and a snippet. filter narrows by types, metadata fields, update time and key prefix. total says ' +
        'how many match; pass next_cursor as cursor for the next page (null: no more).',
      errors: ['insufficient_credits', 'daily_limit_reached', 'invalid_input', 'forbidden'],
      input: schemas.SearchInput,
      output: schemas.SearchOutput,
      run: (core, agent, input, ctx) => core.memories.searchMemories(agent, input, ctx),
    }),
    chargedOperation({
      name: 'memory_history',
      mcp: { tool: 'memory_history', hints: READS },
      title: 'Memory history',
      http: { method: 'GET', path: '/api/ac/memory/history' },
      cost: memoryOp,
      summary: 'List the versions of one memory, and its deletes, newest first.',
      description:
        `Lists the kept versions of memory_key, newest first: each as stored (the last ${limits.memoryHistoryVersions} ` +
        'per key), and each delete. A deleted or expired key keeps its history for ' +
        `${describeDuration(limits.memoryHistoryRetentionSeconds)} after its last change; bring a version back ` +
        'with memory_restore. A key with neither a memory nor a history gets 404, free.',
      errors: ['insufficient_credits', 'daily_limit_reached', 'not_found', 'forbidden'],
      input: schemas.HistoryInput,
      output: schemas.HistoryOutput,
      run: (core, agent, input, ctx) => core.memories.memoryHistory(agent, input, ctx),
    }),
    chargedOperation({
      name: 'memory_restore',
      mcp: { tool: 'memory_restore', hints: { ...READS, readOnlyHint: false, destructiveHint: true } },
      title: 'Restore memory version',
      http: { method: 'POST', path: '/api/ac/memory/restore', ifMatch: true, etag: true },
      cost: memoryOp,
      summary: 'Bring back an earlier version of a memory (also one deleted): priced as a store.',
      description:
        'Stores the value, type and metadata of version (from memory_history) as a new version of memory_key; ' +
        'this also undoes a delete. With expected_version it writes only over that version (412 otherwise). A ' +
        'version not kept is 404, a delete (no content) 400; both free.',
      errors: [
        'insufficient_credits',
        'daily_limit_reached',
        'not_found',
        'quota_exceeded',
        'version_conflict',
        'forbidden',
      ],
      input: schemas.RestoreInput,
      output: schemas.RestoreOutput,
      run: (core, agent, input, ctx) => core.memories.restoreMemory(agent, input, ctx),
    }),
    streamOperation({
      name: 'memory_export',
      title: 'Export memories',
      http: { method: 'GET', path: '/api/ac/memory/export', ndjsonAnswer: true },
      summary: 'Every live memory of the calling agent as NDJSON, streamed, in key order; free.',
      description:
        'Streams your live memories as NDJSON (application/x-ndjson): one JSON object per line, in key order, ' +
        'with version, times, expiry and ttl_seconds, as memory_import reads them back. Free. A memory changed ' +
        'during the export appears as it was when its page was read.',
      errors: ['forbidden'],
      input: schemas.ExportInput,
      output: schemas.ExportLine,
      run: (core, agent) => core.transfer.exportMemories(agent),
    }),
    chargedOperation({
      name: 'memory_import',
      mcp: {
        tool: 'memory_import',
        hints: { ...READS, readOnlyHint: false, destructiveHint: true, idempotentHint: true },
        confirm: (input: { policy: string; dry_run: boolean }) =>
          input.policy === 'skip' || input.dry_run
            ? undefined
            : `Import these memories with policy ${input.policy}? Live memories under the same keys will be ` +
              `replaced${input.policy === 'if_newer' ? ' where the imported line is newer' : ''}.`,
      },
      title: 'Import memories',
      http: { method: 'POST', path: '/api/ac/memory/import', ndjsonBody: schemas.ImportLine },
      cost: { ...memoryOp, per: 'memory' },
      summary:
        'Store memories from NDJSON (an export), upserting by key with a conflict policy; all or none.',
      description:
        'Reads NDJSON (one memory per line, as memory_export writes them; REST: the body as ' +
        `application/x-ndjson with policy and dry_run in the query string, MCP: the ndjson argument; at most ` +
        `${limits.importMaxBytes} bytes) and stores each line's memory ` +
        'under its key, keeping its times (and its version when the key is new here). A live memory that ' +
        'differs is kept (policy=skip, the default), replaced (overwrite) or replaced only by a line updated ' +
        'later (if_newer); a line equal to it is unchanged and free, an expired one skipped. Priced per memory ' +
        'written, as a store. All lines are imported or none: a bad line is a 400 naming it, a balance that ' +
        'cannot pay for all a 402, the quota a 403; free. dry_run=true answers the counts and the price only.',
      errors: ['insufficient_credits', 'daily_limit_reached', 'quota_exceeded', 'forbidden'],
      input: schemas.ImportInput,
      output: schemas.ImportOutput,
      run: (core, agent, input, ctx) => core.transfer.importMemories(agent, input, ctx),
    }),
  ] as const;
}
