/** An agent's live memories read a page at a time in key order (export, semantic search's catch-up). */
import type { Memory } from './model.js';
import type { StorePort } from './store-port.js';

export async function* pagesByKey(
  store: StorePort,
  agentId: string,
  liveAt: string,
  pageSize: number,
): AsyncGenerator<Memory[]> {
  let after: string | undefined;
  for (;;) {
    const page = await store.read((reader) =>
      reader.listMemoriesByKey(agentId, {
        ...(after === undefined ? {} : { after }),
        limit: pageSize,
        liveAt,
      }),
    );
    if (page.length > 0) yield page;
    const last = page.at(-1);
    if (!last || page.length < pageSize) return;
    after = last.key;
  }
}
