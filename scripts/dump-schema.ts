/**
 * `npm run schema`: regenerates src/store/postgres/schema.sql, the schema as it stands after the last
 * migration, from a fresh database that the project's migrate() brought up to date on a throwaway PostgreSQL
 * cluster (scripts/schema-text.ts). Run with tsx. test/store/schema-file.test.ts fails until the committed
 * file is what this writes.
 */
import path from 'node:path';
import { SCHEMA_FILE, writeSchemaFile } from './schema-text.js';

const started = performance.now();
const text = await writeSchemaFile();
const lines = text.split('\n').length - 1;
console.log(
  `Wrote ${path.relative(process.cwd(), SCHEMA_FILE)} (${lines} lines) in ${Math.round(performance.now() - started)} ms.`,
);
