/**
 * Named (prepared) statements: each distinct SQL text gets a name once per process, and `pg` prepares it once
 * per connection, so PostgreSQL parses and plans it once instead of on every call. The store's statements are
 * fixed texts with parameters, so the names stay few.
 */
import type pg from 'pg';

export type Queryable = Pick<pg.ClientBase, 'query'>;

/** What runs the store's statements: a text and its values, the answer. */
export interface Statements {
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
}

const names = new Map<string, string>();

/** The name under which `text` is prepared on every connection. */
export function nameOf(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `ac_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}
