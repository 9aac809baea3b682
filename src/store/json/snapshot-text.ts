/**
 * A snapshot's JSON text in parts of at most `recordsPerPart` records, so that writing a large store does
 * not hold the event loop for the whole serialisation (100,000 memories are tens of megabytes): the parts
 * joined are exactly what `JSON.parse` reads back as the snapshot.
 */
import type { Snapshot } from './json-state.js';

/**
 * Every list that grows with use: memory histories (a version per update) and live-data counts too, which
 * JSON.stringify once held whole in the head (after a benchmark's stores, tens of megabytes in one call).
 */
const RECORD_LISTS = ['accounts', 'memories', 'ledger', 'idempotency', 'history', 'liveUsage'] as const;

export function* snapshotText(snapshot: Snapshot, recordsPerPart = 1000): Generator<string> {
  // The head: every field but the lists, which follow it in parts.
  const head = Object.fromEntries(
    Object.entries(snapshot).filter(([name]) => !(RECORD_LISTS as readonly string[]).includes(name)),
  );
  const headText = JSON.stringify(head); // {"format":"agent-context/1",…}: never empty, format is required
  yield headText.slice(0, -1);
  for (const name of RECORD_LISTS) {
    const records: readonly unknown[] | undefined = snapshot[name];
    if (records === undefined) continue;
    yield `,${JSON.stringify(name)}:[`;
    for (let start = 0; start < records.length; start += recordsPerPart) {
      const text = JSON.stringify(records.slice(start, start + recordsPerPart));
      yield start === 0 ? text.slice(1, -1) : `,${text.slice(1, -1)}`;
    }
    yield ']';
  }
  yield '}';
}
