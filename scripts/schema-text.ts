/**
 * The PostgreSQL store's schema as it stands after the last migration, as text: what `npm run schema`
 * (scripts/dump-schema.ts) writes to src/store/postgres/schema.sql, and what test/store/schema-file.test.ts
 * compares that file with. A development tool: nothing in src/ imports it, so it is never built or packed.
 *
 * Read from the catalog (pg_catalog), not with pg_dump (the npm package's PostgreSQL has none), in one
 * transaction with an empty search_path, so that every name outside pg_catalog is qualified (public.) and
 * the text does not depend on the session. Each object appears once, as it is now: a function that a later
 * migration re-created shows only the body that runs. Objects are grouped by kind (types, sequences, tables,
 * views, indexes, functions, triggers) and sorted by name, in code-unit order, within each; a table's columns
 * are in their order in the table, its constraints sorted by name. Owners and the sequences' current values
 * are not schema and are left out. Grouped for reading, not for running: a composite type may name a table
 * that comes after it.
 *
 * Left out: schema_migrations, the migrator's bookkeeping, which migrate.ts creates itself (no migration
 * does), with its index and row type. Anything this module cannot render (another schema, an extension,
 * privileges, a policy, a rule, inheritance, partitions, operators...) is an error naming it, never a silent
 * omission: teach this module to render it in the change that adds it.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate } from '../src/store/postgres/migrate.js';
import { PostgresCluster } from '../test/helpers/postgres-cluster.js';

/** The generated file, beside the migrations it is made from (not in migrations/: the migrator never runs it). */
export const SCHEMA_FILE = fileURLToPath(new URL('../src/store/postgres/schema.sql', import.meta.url));

/** The command that regenerates SCHEMA_FILE. */
export const SCHEMA_COMMAND = 'npm run schema';

/** The migrator's own table (migrate.ts), not made by any migration. */
const BOOKKEEPING_TABLE = 'schema_migrations';

/** The smallest interface of pg's Client and PoolClient that this module needs. */
interface Queryable {
  query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>>;
}

/** Code-unit order: the same on every machine, whatever the database's or Node's locale. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** By name as written in the catalog: a name that had to be quoted sorts as if it had not been. */
const byName = (a: string, b: string) => byText(a.replaceAll('"', ''), b.replaceAll('"', ''));
const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * Throws when the database holds something that schemaText does not render, so that the file never omits
 * part of the schema unnoticed.
 */
async function refuseWhatIsNotRendered(db: Queryable): Promise<void> {
  const { rows } = await db.query<{ what: string }>(`
    SELECT 'schema ' || nspname AS what FROM pg_namespace
     WHERE nspname NOT IN ('public', 'pg_catalog', 'information_schema', 'pg_toast')
       AND nspname !~ '^pg_(toast_)?temp_'
    UNION ALL SELECT 'extension ' || extname FROM pg_extension WHERE extname <> 'plpgsql'
    UNION ALL SELECT 'event trigger ' || evtname FROM pg_event_trigger
    UNION ALL SELECT 'default privileges' FROM pg_default_acl
    UNION ALL SELECT 'privileges on ' || c.oid::regclass::text FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relacl IS NOT NULL
    UNION ALL SELECT 'privileges on ' || p.oid::regprocedure::text FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND p.proacl IS NOT NULL
    UNION ALL SELECT 'privileges on ' || t.oid::regtype::text FROM pg_type t
     WHERE t.typnamespace = 'public'::regnamespace AND t.typacl IS NOT NULL
    UNION ALL SELECT 'relation ' || c.oid::regclass::text || ' of kind ' || c.relkind::text FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind NOT IN ('r', 'i', 'S', 'v', 'm', 'c')
    UNION ALL SELECT 'row level security on ' || c.oid::regclass::text FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND (c.relrowsecurity OR c.relforcerowsecurity)
    UNION ALL SELECT 'policy ' || polname FROM pg_policy
    UNION ALL SELECT 'rule ' || r.rulename || ' on ' || r.ev_class::regclass::text FROM pg_rewrite r
      JOIN pg_class c ON c.oid = r.ev_class
     WHERE c.relnamespace = 'public'::regnamespace AND r.rulename <> '_RETURN'
    UNION ALL SELECT 'inheritance of ' || inhrelid::regclass::text FROM pg_inherits
    UNION ALL SELECT 'statistics object ' || stxname FROM pg_statistic_ext
     WHERE stxnamespace = 'public'::regnamespace
    UNION ALL SELECT 'function ' || p.oid::regprocedure::text || ' of kind ' || p.prokind::text FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND p.prokind NOT IN ('f', 'p')
    UNION ALL SELECT 'type ' || t.oid::regtype::text || ' of kind ' || t.typtype::text FROM pg_type t
     WHERE t.typnamespace = 'public'::regnamespace AND t.typtype NOT IN ('c', 'e', 'd')
       AND NOT EXISTS (SELECT 1 FROM pg_type e WHERE e.typarray = t.oid)
    UNION ALL SELECT 'operator ' || oprname FROM pg_operator WHERE oprnamespace = 'public'::regnamespace
    UNION ALL SELECT 'operator class ' || opcname FROM pg_opclass WHERE opcnamespace = 'public'::regnamespace
    UNION ALL SELECT 'operator family ' || opfname FROM pg_opfamily WHERE opfnamespace = 'public'::regnamespace
    UNION ALL SELECT 'collation ' || collname FROM pg_collation WHERE collnamespace = 'public'::regnamespace
    UNION ALL SELECT 'conversion ' || conname FROM pg_conversion WHERE connamespace = 'public'::regnamespace
    UNION ALL SELECT 'text search configuration ' || cfgname FROM pg_ts_config
     WHERE cfgnamespace = 'public'::regnamespace
    UNION ALL SELECT 'text search dictionary ' || dictname FROM pg_ts_dict
     WHERE dictnamespace = 'public'::regnamespace
    UNION ALL SELECT 'cast with function ' || castfunc::regprocedure::text FROM pg_cast c
      JOIN pg_proc p ON p.oid = c.castfunc WHERE p.pronamespace = 'public'::regnamespace`);
  const found = rows.map((row) => row.what).sort(byText);
  if (found.length > 0) {
    throw new Error(
      `The schema holds what scripts/schema-text.ts does not render: ${found.join('; ')}. Teach it to ` +
        `render them, then run \`${SCHEMA_COMMAND}\`.`,
    );
  }
}

interface Column {
  relid: number;
  attnum: number;
  /** Quoted as an identifier where it must be (quote_ident), as every name read from the catalog here. */
  name: string;
  type: string;
  not_null: boolean;
  generated: string;
  identity: string;
  default: string | null;
  collation: string | null;
  stattarget: number | null;
  storage: string | null;
  options: string[] | null;
  compression: string;
}

interface Constraint {
  oid: number;
  relid: number;
  typid: number;
  name: string;
  def: string;
}

/** Comments by object: `catalog:oid:subid` (subid: a column's number, else 0) to the COMMENT's literal. */
class Comments {
  private readonly left: Map<string, string>;

  constructor(rows: { catalog: string; objoid: number; objsubid: number; description: string }[]) {
    this.left = new Map(rows.map((r) => [`${r.catalog}:${r.objoid}:${r.objsubid}`, r.description]));
  }

  /** `COMMENT ON <target> IS '...';` when the object has one. */
  on(catalog: string, oid: number, subid: number, target: string): string[] {
    const key = `${catalog}:${oid}:${subid}`;
    const text = this.left.get(key);
    if (text === undefined) return [];
    this.left.delete(key);
    return [`COMMENT ON ${target} IS ${quoteLiteral(text)};`];
  }

  /** Throws when a comment was on something not rendered. */
  done(): void {
    const left = [...this.left.keys()].sort(byText);
    if (left.length > 0) {
      throw new Error(
        `The schema has comments on objects scripts/schema-text.ts does not render: ${left.join(', ')}.`,
      );
    }
  }
}

function columnLine(c: Column): string {
  const parts = [`${c.name} ${c.type}`];
  if (c.collation !== null) parts.push(`COLLATE ${c.collation}`);
  if (c.generated === 's') parts.push(`GENERATED ALWAYS AS (${c.default}) STORED`);
  else if (c.identity === 'a') parts.push('GENERATED ALWAYS AS IDENTITY');
  else if (c.identity === 'd') parts.push('GENERATED BY DEFAULT AS IDENTITY');
  else if (c.default !== null) parts.push(`DEFAULT ${c.default}`);
  if (c.not_null) parts.push('NOT NULL');
  return parts.join(' ');
}

/** A column's settings beyond its definition, as ALTER TABLE statements. */
function columnSettings(table: string, c: Column): string[] {
  const alter = `ALTER TABLE ONLY ${table} ALTER COLUMN ${c.name}`;
  const lines: string[] = [];
  if (c.stattarget !== null && c.stattarget >= 0) lines.push(`${alter} SET STATISTICS ${c.stattarget};`);
  if (c.storage !== null) lines.push(`${alter} SET STORAGE ${STORAGE[c.storage] ?? c.storage};`);
  if (c.options !== null) lines.push(`${alter} SET (${[...c.options].sort(byText).join(', ')});`);
  if (c.compression !== '') lines.push(`${alter} SET COMPRESSION ${c.compression === 'p' ? 'pglz' : 'lz4'};`);
  return lines;
}

const STORAGE: Record<string, string> = { p: 'PLAIN', e: 'EXTERNAL', m: 'MAIN', x: 'EXTENDED' };

/** A relation's storage parameters (reloptions), sorted: ` WITH (fillfactor=50)`, or nothing. */
const withOptions = (options: string[] | null) =>
  options === null ? '' : ` WITH (${[...options].sort(byText).join(', ')})`;

/** The schema of the database `db` is connected to (see the module comment). `db` is left in no transaction. */
export async function schemaText(db: Queryable): Promise<string> {
  await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    await db.query("SET LOCAL search_path = ''");
    const text = await readSchema(db);
    await db.query('COMMIT');
    return text;
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

async function readSchema(db: Queryable): Promise<string> {
  await refuseWhatIsNotRendered(db);
  const PUBLIC = "'public'::regnamespace";

  const { rows: versionRows } = await db.query<{ major: number }>(
    "SELECT current_setting('server_version_num')::int / 10000 AS major",
  );
  const { rows: last } = await db.query<{ version: number; name: string }>(
    `SELECT version, name FROM public.${BOOKKEEPING_TABLE} ORDER BY version DESC LIMIT 1`,
  );

  const { rows: relations } = await db.query<{
    oid: number;
    name: string;
    kind: string;
    unlogged: boolean;
    options: string[] | null;
    access_method: string | null;
    replica_identity: string;
  }>(`
    SELECT c.oid::int AS oid, c.oid::regclass::text AS name, c.relkind AS kind,
           c.relpersistence = 'u' AS unlogged, c.reloptions AS options, am.amname AS access_method,
           c.relreplident AS replica_identity
      FROM pg_class c LEFT JOIN pg_am am ON am.oid = c.relam
     WHERE c.relnamespace = ${PUBLIC} AND c.relkind IN ('r', 'v', 'm', 'c', 'S')
       AND NOT (c.relkind = 'r' AND c.relname = '${BOOKKEEPING_TABLE}')`);
  const relationName = new Map(relations.map((r) => [r.oid, r.name]));

  const { rows: columns } = await db.query<Column>(`
    SELECT a.attrelid::int AS relid, a.attnum, quote_ident(a.attname) AS name, format_type(a.atttypid, a.atttypmod) AS type,
           a.attnotnull AS not_null, a.attgenerated AS generated, a.attidentity AS identity,
           pg_get_expr(d.adbin, d.adrelid) AS default,
           CASE WHEN a.attcollation <> t.typcollation
                THEN (SELECT quote_ident(n.nspname) || '.' || quote_ident(co.collname)
                        FROM pg_collation co JOIN pg_namespace n ON n.oid = co.collnamespace
                       WHERE co.oid = a.attcollation) END AS collation,
           NULLIF(a.attstattarget, -1)::int AS stattarget,
           CASE WHEN a.attstorage <> t.typstorage THEN a.attstorage END AS storage,
           a.attoptions AS options, a.attcompression AS compression
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid
      JOIN pg_type t ON t.oid = a.atttypid
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE c.relnamespace = ${PUBLIC} AND c.relkind IN ('r', 'v', 'm', 'c')
       AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY a.attrelid, a.attnum`);
  const columnsOf = (relid: number) => columns.filter((c) => c.relid === relid);

  const { rows: constraints } = await db.query<Constraint>(`
    SELECT oid::int AS oid, conrelid::int AS relid, contypid::int AS typid, quote_ident(conname) AS name,
           pg_get_constraintdef(oid) AS def
      FROM pg_constraint WHERE connamespace = ${PUBLIC} AND contype <> 't'`);
  const constraintsOf = (test: (c: Constraint) => boolean) =>
    constraints.filter(test).sort((a, b) => byName(a.name, b.name));

  const { rows: descriptions } = await db.query<{
    catalog: string;
    objoid: number;
    objsubid: number;
    description: string;
  }>(`
    SELECT d.classoid::regclass::text AS catalog, d.objoid::int AS objoid, d.objsubid, d.description
      FROM pg_description d
     WHERE (d.classoid = 'pg_class'::regclass
            AND d.objoid IN (SELECT oid FROM pg_class WHERE relnamespace = ${PUBLIC}))
        OR (d.classoid = 'pg_proc'::regclass
            AND d.objoid IN (SELECT oid FROM pg_proc WHERE pronamespace = ${PUBLIC}))
        OR (d.classoid = 'pg_type'::regclass
            AND d.objoid IN (SELECT oid FROM pg_type WHERE typnamespace = ${PUBLIC}))
        OR (d.classoid = 'pg_constraint'::regclass
            AND d.objoid IN (SELECT oid FROM pg_constraint WHERE connamespace = ${PUBLIC}))
        OR (d.classoid = 'pg_trigger'::regclass
            AND d.objoid IN (SELECT t.oid FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                              WHERE c.relnamespace = ${PUBLIC}))`);
  const comments = new Comments(descriptions);
  const columnComments = (relid: number, relation: string) =>
    columnsOf(relid).flatMap((c) => comments.on('pg_class', relid, c.attnum, `COLUMN ${relation}.${c.name}`));

  const sections: { title: string; blocks: string[] }[] = [];

  // Types: composite types of their own (not a table's row type), enums, domains; not the array types.
  const { rows: types } = await db.query<{
    oid: number;
    name: string;
    kind: string;
    relid: number;
    base: string | null;
    not_null: boolean;
    default: string | null;
    collation: string | null;
    labels: string[] | null;
  }>(`
    SELECT t.oid::int AS oid, t.oid::regtype::text AS name, t.typtype AS kind, t.typrelid::int AS relid,
           CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) END AS base,
           t.typnotnull AS not_null, t.typdefault AS default,
           CASE WHEN t.typtype = 'd' AND t.typcollation <> b.typcollation
                THEN (SELECT quote_ident(n.nspname) || '.' || quote_ident(co.collname)
                        FROM pg_collation co JOIN pg_namespace n ON n.oid = co.collnamespace
                       WHERE co.oid = t.typcollation) END AS collation,
           (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid)
             AS labels
      FROM pg_type t LEFT JOIN pg_type b ON b.oid = t.typbasetype
     WHERE t.typnamespace = ${PUBLIC} AND t.typtype IN ('c', 'e', 'd')
       AND NOT EXISTS (SELECT 1 FROM pg_type e WHERE e.typarray = t.oid)
       AND (t.typtype <> 'c' OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')`);
  sections.push({
    title: 'Types',
    blocks: types
      .sort((a, b) => byName(a.name, b.name))
      .map((t) => {
        const lines: string[] = [];
        if (t.kind === 'c') {
          const fields = columnsOf(t.relid).map((c) => `  ${columnLine(c)}`);
          lines.push(`CREATE TYPE ${t.name} AS (\n${fields.join(',\n')}\n);`);
          lines.push(...columnComments(t.relid, t.name));
        } else if (t.kind === 'e') {
          const labels = (t.labels ?? []).map((l) => `  ${quoteLiteral(l)}`);
          lines.push(`CREATE TYPE ${t.name} AS ENUM (\n${labels.join(',\n')}\n);`);
        } else {
          const parts = [`CREATE DOMAIN ${t.name} AS ${t.base}`];
          if (t.collation !== null) parts.push(`COLLATE ${t.collation}`);
          if (t.default !== null) parts.push(`DEFAULT ${t.default}`);
          if (t.not_null) parts.push('NOT NULL');
          for (const c of constraintsOf((c) => c.typid === t.oid)) {
            parts.push(`CONSTRAINT ${c.name} ${c.def}`);
          }
          lines.push(`${parts.join('\n  ')};`);
          for (const c of constraintsOf((c) => c.typid === t.oid)) {
            lines.push(...comments.on('pg_constraint', c.oid, 0, `CONSTRAINT ${c.name} ON DOMAIN ${t.name}`));
          }
        }
        lines.push(...comments.on('pg_type', t.oid, 0, `TYPE ${t.name}`));
        return lines.join('\n');
      }),
  });

  // Sequences, but an identity column's own (the column says GENERATED ... AS IDENTITY).
  const { rows: sequences } = await db.query<{
    oid: number;
    type: string;
    start: string;
    increment: string;
    min: string;
    max: string;
    cache: string;
    cycle: boolean;
    owned_by: string | null;
    identity: boolean;
  }>(`
    SELECT s.seqrelid::int AS oid, format_type(s.seqtypid, NULL) AS type, s.seqstart AS start,
           s.seqincrement AS increment, s.seqmin AS min, s.seqmax AS max, s.seqcache AS cache,
           s.seqcycle AS cycle,
           (SELECT d.refobjid::regclass::text || '.' || quote_ident(a.attname)
              FROM pg_depend d
              JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
             WHERE d.classid = 'pg_class'::regclass AND d.objid = s.seqrelid
               AND d.refclassid = 'pg_class'::regclass AND d.deptype = 'a' AND d.refobjsubid > 0) AS owned_by,
           EXISTS (SELECT 1 FROM pg_depend d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = s.seqrelid AND d.deptype = 'i')
             AS identity
      FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
     WHERE c.relnamespace = ${PUBLIC}`);
  sections.push({
    title: 'Sequences',
    blocks: sequences
      .filter((s) => !s.identity)
      .map((s) => ({ ...s, name: relationName.get(s.oid) as string }))
      .sort((a, b) => byName(a.name, b.name))
      .map((s) => {
        const lines = [
          `CREATE SEQUENCE ${s.name}\n  AS ${s.type}\n  START WITH ${s.start}\n  INCREMENT BY ${s.increment}\n` +
            `  MINVALUE ${s.min}\n  MAXVALUE ${s.max}\n  CACHE ${s.cache}${s.cycle ? '\n  CYCLE' : ''};`,
        ];
        if (s.owned_by !== null) lines.push(`ALTER SEQUENCE ${s.name} OWNED BY ${s.owned_by};`);
        lines.push(...comments.on('pg_class', s.oid, 0, `SEQUENCE ${s.name}`));
        return lines.join('\n');
      }),
  });

  // Tables: columns in table order, then constraints by name; storage parameters; settings; comments.
  sections.push({
    title: 'Tables',
    blocks: relations
      .filter((r) => r.kind === 'r')
      .sort((a, b) => byName(a.name, b.name))
      .map((r) => {
        const tableColumns = columnsOf(r.oid);
        const tableConstraints = constraintsOf((c) => c.relid === r.oid);
        const items = [
          ...tableColumns.map(columnLine),
          ...tableConstraints.map((c) => `CONSTRAINT ${c.name} ${c.def}`),
        ];
        let create = `CREATE ${r.unlogged ? 'UNLOGGED ' : ''}TABLE ${r.name} (\n${items.map((i) => `  ${i}`).join(',\n')}\n)`;
        if (r.access_method !== null && r.access_method !== 'heap') create += ` USING ${r.access_method}`;
        const lines = [`${create}${withOptions(r.options)};`];
        for (const c of tableColumns) lines.push(...columnSettings(r.name, c));
        if (r.replica_identity !== 'd') {
          const identity =
            { n: 'NOTHING', f: 'FULL', i: 'USING INDEX' }[r.replica_identity] ?? r.replica_identity;
          lines.push(`ALTER TABLE ONLY ${r.name} REPLICA IDENTITY ${identity};`);
        }
        lines.push(...comments.on('pg_class', r.oid, 0, `TABLE ${r.name}`));
        lines.push(...columnComments(r.oid, r.name));
        for (const c of tableConstraints) {
          lines.push(...comments.on('pg_constraint', c.oid, 0, `CONSTRAINT ${c.name} ON ${r.name}`));
        }
        return lines.join('\n');
      }),
  });

  // Views and materialized views.
  const { rows: viewDefs } = await db.query<{ oid: number; def: string }>(`
    SELECT c.oid::int AS oid, pg_get_viewdef(c.oid) AS def FROM pg_class c
     WHERE c.relnamespace = ${PUBLIC} AND c.relkind IN ('v', 'm')`);
  const viewDef = new Map(viewDefs.map((v) => [v.oid, v.def.replace(/;\s*$/u, '')]));
  sections.push({
    title: 'Views',
    blocks: relations
      .filter((r) => r.kind === 'v' || r.kind === 'm')
      .sort((a, b) => byName(a.name, b.name))
      .map((r) => {
        const kind = r.kind === 'm' ? 'MATERIALIZED VIEW' : 'VIEW';
        const lines = [`CREATE ${kind} ${r.name}${withOptions(r.options)} AS\n${viewDef.get(r.oid)};`];
        lines.push(...comments.on('pg_class', r.oid, 0, `${kind} ${r.name}`));
        lines.push(...columnComments(r.oid, r.name));
        return lines.join('\n');
      }),
  });

  // Indexes: every one, by name; one that a constraint made (its table's PRIMARY KEY, UNIQUE or EXCLUDE) is
  // shown as a comment, since the constraint above creates it.
  const { rows: indexes } = await db.query<{
    oid: number;
    name: string;
    table: string;
    def: string;
    constraint: string | null;
    clustered: boolean;
  }>(`
    SELECT i.indexrelid::int AS oid, quote_ident(ic.relname) AS name, i.indrelid::regclass::text AS table,
           pg_get_indexdef(i.indexrelid) AS def, quote_ident(con.conname) AS constraint, i.indisclustered AS clustered
      FROM pg_index i
      JOIN pg_class ic ON ic.oid = i.indexrelid
      JOIN pg_class tc ON tc.oid = i.indrelid
      LEFT JOIN pg_constraint con
        ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u', 'x')
     WHERE ic.relnamespace = ${PUBLIC} AND tc.relname <> '${BOOKKEEPING_TABLE}'`);
  sections.push({
    title: 'Indexes',
    blocks: indexes
      .sort((a, b) => byName(a.name, b.name))
      .map((i) => {
        const lines =
          i.constraint === null
            ? [`${i.def};`]
            : [`-- Made by the constraint ${i.constraint} of ${i.table}:`, `-- ${i.def};`];
        if (i.clustered) lines.push(`ALTER TABLE ${i.table} CLUSTER ON ${i.name};`);
        lines.push(...comments.on('pg_class', i.oid, 0, `INDEX public.${i.name}`));
        return lines.join('\n');
      }),
  });

  // Functions and procedures: the definition that runs now, by name then arguments.
  const { rows: functions } = await db.query<{
    oid: number;
    name: string;
    args: string;
    kind: string;
    def: string;
  }>(`
    SELECT p.oid::int AS oid, quote_ident(p.proname) AS name, pg_get_function_identity_arguments(p.oid) AS args,
           p.prokind AS kind, pg_get_functiondef(p.oid) AS def
      FROM pg_proc p WHERE p.pronamespace = ${PUBLIC} AND p.prokind IN ('f', 'p')`);
  sections.push({
    title: 'Functions',
    blocks: functions
      .sort((a, b) => byName(a.name, b.name) || byText(a.args, b.args))
      .map((f) => {
        const kind = f.kind === 'p' ? 'PROCEDURE' : 'FUNCTION';
        const target = `${kind} public.${f.name}(${f.args})`;
        return [`${f.def.trimEnd()};`, ...comments.on('pg_proc', f.oid, 0, target)].join('\n');
      }),
  });

  // Triggers (not the internal ones of foreign keys), by name then table.
  const { rows: triggers } = await db.query<{ oid: number; name: string; table: string; def: string }>(`
    SELECT t.oid::int AS oid, quote_ident(t.tgname) AS name, t.tgrelid::regclass::text AS table,
           pg_get_triggerdef(t.oid) AS def
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.relnamespace = ${PUBLIC} AND NOT t.tgisinternal AND c.relname <> '${BOOKKEEPING_TABLE}'`);
  sections.push({
    title: 'Triggers',
    blocks: triggers
      .sort((a, b) => byName(a.name, b.name) || byName(a.table, b.table))
      .map((t) =>
        [`${t.def};`, ...comments.on('pg_trigger', t.oid, 0, `TRIGGER ${t.name} ON ${t.table}`)].join('\n'),
      ),
  });

  comments.done();

  const newest = last[0];
  const header = [
    '-- GENERATED FILE: DO NOT EDIT BY HAND.',
    '--',
    "-- The PostgreSQL store's schema as it stands after the last migration",
    `-- (${newest === undefined ? 'none' : `${String(newest.version).padStart(4, '0')}_${newest.name}`}), ` +
      `read from the catalog of a fresh database migrated on PostgreSQL ${versionRows[0]?.major}.`,
    `-- Regenerate it with \`${SCHEMA_COMMAND}\` (scripts/dump-schema.ts, scripts/schema-text.ts);`,
    '-- test/store/schema-file.test.ts fails while it differs from what the migrations make.',
    '--',
    '-- The migrations in ./migrations are the history, and the only SQL that is ever applied: nothing runs this',
    '-- file. To change the schema, add a migration, then regenerate this file. Here each object appears once, as',
    '-- it is now (a function that a later migration re-created shows only the definition that runs), grouped by',
    '-- kind and sorted by name: for reading, not for running. Names are qualified (public.). Not shown:',
    "-- schema_migrations, the migrator's bookkeeping (migrate.ts creates it; no migration does), owners, and",
    "-- the sequences' current values.",
  ];
  const body = sections.map(({ title, blocks }) =>
    [`-- ${title}`, ...(blocks.length === 0 ? ['-- (none)'] : blocks)].join('\n\n'),
  );
  return `${[header.join('\n'), ...body].join('\n\n\n')}\n`;
}

/**
 * Starts a throwaway PostgreSQL cluster as the test suite does (test/helpers/postgres-cluster.ts: the npm
 * package's PostgreSQL 15, or AC_TEST_PG_BIN's), creates a fresh database, applies every migration with the
 * project's migrate(), and returns schemaText of it. The cluster is stopped and deleted.
 */
export async function generateSchema(): Promise<string> {
  const cluster = await PostgresCluster.start();
  try {
    const client = new pg.Client({ connectionString: await cluster.createDatabase('schema') });
    await client.connect();
    try {
      await migrate(client);
      return await schemaText(client);
    } finally {
      await client.end();
    }
  } finally {
    await cluster.stop();
  }
}

/** Regenerates SCHEMA_FILE; returns its text. */
export async function writeSchemaFile(): Promise<string> {
  const text = await generateSchema();
  await writeFile(SCHEMA_FILE, text);
  return text;
}
