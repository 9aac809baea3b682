/**
 * The operation table: every operation of the service declared once, with its HTTP method and path, its
 * MCP tool name and annotations, its schemas, its price and a description written for agents. The REST
 * routes, ping's `agent_api` map, the OpenAPI document, llms.txt and the MCP tools are all generated from
 * this table. The entries are written by domain in operations/ (memory.ts, account.ts, live-data.ts,
 * admin.ts, each with its schemas beside it); this module puts them in order and checks that every charged
 * operation has its entry.
 */
import type { ChargedOperationName } from './model.js';
import type { ChargedOperation, Operation } from './operation-kit.js';
import { accountOperations, registrationOperations } from './operations/account.js';
import { adminOperations } from './operations/admin.js';
import { liveDataOperations } from './operations/live-data.js';
import { memoryOperations } from './operations/memory.js';
import type { Schemas } from './schemas.js';

export {
  type Auth,
  type Cost,
  costFigures,
  costSentence,
  type HttpMethod,
  type Operation,
  type RestOperation,
  restOperations,
  type ToolHints,
} from './operation-kit.js';

/**
 * Whether the table holds a charged entry for every name of `CHARGED_OPERATIONS` (model.ts): `true` when it
 * does, otherwise the names it lacks. `chargedOperation` takes no other name, so the two are the same set.
 */
type EveryChargedNameHasAnEntry<Entries> = [ChargedOperationName] extends [
  Extract<Entries, ChargedOperation>['name'],
]
  ? true
  : Exclude<ChargedOperationName, Extract<Entries, ChargedOperation>['name']>;

export function createOperations(schemas: Schemas): readonly Operation[] {
  const { limits } = schemas;
  // The order is the order of tools/list, the OpenAPI paths and llms.txt.
  const table = [
    ...registrationOperations(schemas),
    ...memoryOperations(schemas, limits),
    ...liveDataOperations(schemas, limits),
    ...accountOperations(schemas, limits),
    ...adminOperations(schemas),
  ] as const;
  const complete: EveryChargedNameHasAnEntry<(typeof table)[number]> = true;
  void complete;
  return Object.freeze([...table]);
}
