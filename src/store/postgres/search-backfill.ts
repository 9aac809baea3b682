/**
 * Gives the memories written before migration 0005 their search column: the terms are computed by the
 * service (search-text.ts), not in SQL, so a migration cannot. Run at start-up after the migrations, in
 * batches; rows another instance fills at the same time are simply written twice, the same.
 */

import { SEARCH_VECTOR, searchTermsOf } from './memory-query-sql.js';
import type { Queryable } from './prepared.js';

const BATCH = 1000;

/** @returns how many rows it filled. */
export async function backfillSearch(db: Queryable): Promise<number> {
  let filled = 0;
  for (;;) {
    const { rows } = await db.query(
      `SELECT agent_id, key, value, metadata FROM memories WHERE search IS NULL LIMIT ${BATCH}`,
    );
    if (rows.length === 0) return filled;
    const columns: string[][] = [[], [], [], [], []];
    for (const row of rows) {
      const terms = searchTermsOf({
        key: String(row.key),
        value: (row.value as Buffer).toString('utf8'),
        metadata: row.metadata,
      });
      const values = [String(row.agent_id), String(row.key), ...terms];
      for (let i = 0; i < values.length; i++) columns[i]?.push(values[i] as string);
    }
    await db.query(
      `UPDATE memories AS m SET search = ${SEARCH_VECTOR('u.k', 'u.v', 'u.c')} ` +
        'FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(agent_id, key, k, v, c) ' +
        'WHERE m.agent_id = u.agent_id AND m.key = u.key AND m.search IS NULL',
      columns,
    );
    filled += rows.length;
  }
}
