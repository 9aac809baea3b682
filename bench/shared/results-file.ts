/** bench/results/ (ignored by git): where the benchmarks leave their JSON results and profiles. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from './build.mjs';

export const RESULTS_DIR = path.join(ROOT, 'bench', 'results');

/** Writes `value` as indented JSON to bench/results/<name>; answers the file's path. */
export async function writeResultsFile(name: string, value: unknown): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, name);
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
  return file;
}
