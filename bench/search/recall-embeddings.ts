/**
 * bench:recall's view of the server's background embedding, read from its JSON log (AC_LOG_LEVEL debug):
 * the start-up line that says semantic search is on (and with which model), and one line per batch
 * embedded (`embedded`: how many, `ms`: how long, `queued`: how many still wait). The questions are asked
 * only once every memory stored has been embedded, so that recall measures the ranking, not the backlog.
 * A server whose writes embed nothing (the in-process model on the JSON store: `embedsOnWrite` false, a
 * search embeds what it ranks) has no background work to wait for or report.
 */
import { readFile } from 'node:fs/promises';
import { sleep } from '../shared/processes.js';

export interface EmbeddingProgress {
  model: string;
  /** Memories embedded so far (catch-up included). */
  embedded: number;
  /** Time spent embedding them, summed over batches. */
  ms: number;
  /** Memories waiting when the last batch ended. */
  queued: number;
}

/** What the log says so far; undefined when semantic search is off or its writes embed nothing. */
export async function embeddingProgress(logFile: string): Promise<EmbeddingProgress | undefined> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  let progress: EmbeddingProgress | undefined;
  for (const line of text.split('\n')) {
    if (!line.includes('"semantic search')) continue;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (entry.msg === 'semantic search: on') {
      if (entry.embedsOnWrite === false) return undefined;
      progress = { model: String(entry.model), embedded: 0, ms: 0, queued: 0 };
    } else if (entry.msg === 'semantic search: embedded' && progress) {
      progress.embedded += Number(entry.embedded);
      progress.ms += Number(entry.ms);
      progress.queued = Number(entry.queued);
    }
  }
  return progress;
}

/**
 * Waits until at least `expected` memories have been embedded and none waits; undefined at once when
 * semantic search is off or its writes embed nothing. Fails when nothing moves for `stallMs`.
 */
export async function waitForEmbeddings(
  logFile: string,
  expected: number,
  report: (line: string) => void,
  stallMs = 120_000,
): Promise<EmbeddingProgress | undefined> {
  let last = -1;
  let movedAt = performance.now();
  let reportedAt = performance.now();
  for (;;) {
    const progress = await embeddingProgress(logFile);
    if (!progress) return undefined;
    if (progress.embedded >= expected && progress.queued === 0) return progress;
    if (progress.embedded !== last) {
      last = progress.embedded;
      movedAt = performance.now();
    } else if (performance.now() - movedAt > stallMs) {
      throw new Error(`embedding stalled at ${progress.embedded} of ${expected} memories`);
    }
    if (performance.now() - reportedAt > 10_000) {
      report(`embedding: ${progress.embedded} of ${expected} memories`);
      reportedAt = performance.now();
    }
    await sleep(200);
  }
}
