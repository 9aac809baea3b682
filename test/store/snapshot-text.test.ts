/** A snapshot written in parts reads back as exactly the snapshot, whatever the part size. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/store/json/json-state.js';
import { snapshotText } from '../../src/store/json/snapshot-text.js';

const record = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 });

describe('snapshotText', () => {
  it('joins to JSON that parses back to the snapshot', () => {
    fc.assert(
      fc.property(
        fc.array(record, { maxLength: 12 }),
        fc.array(record, { maxLength: 12 }),
        fc.array(record, { maxLength: 12 }),
        fc.option(fc.array(record, { maxLength: 12 }), { nil: undefined }),
        fc.option(fc.array(record, { maxLength: 12 }), { nil: undefined }),
        fc.option(fc.array(record, { maxLength: 12 }), { nil: undefined }),
        fc.option(fc.nat(), { nil: undefined }),
        fc.integer({ min: 1, max: 5 }),
        (accounts, memories, ledger, idempotency, history, liveUsage, lastSeq, perPart) => {
          const snapshot = {
            format: 'agent-context/1',
            ...(lastSeq === undefined ? {} : { lastSeq }),
            accounts,
            memories,
            ledger,
            ...(idempotency === undefined ? {} : { idempotency }),
            ...(history === undefined ? {} : { history }),
            ...(liveUsage === undefined ? {} : { liveUsage }),
          } as unknown as Snapshot;
          const parts = [...snapshotText(snapshot, perPart)];
          expect(JSON.parse(parts.join(''))).toEqual(JSON.parse(JSON.stringify(snapshot)));
          // No part holds more than perPart records: every list, histories and live-data counts included, is
          // cut into parts (the head holds none of them).
          // Parts: the head, then per list present its opening, its records perPart at a time and its closing
          // bracket, then the closing brace.
          const lists = [accounts, memories, ledger, idempotency, history, liveUsage];
          const cut = lists.reduce(
            (sum, list) => sum + (list === undefined ? 0 : 2 + Math.ceil(list.length / perPart)),
            0,
          );
          expect(parts.length).toBe(2 + cut);
          expect(Object.keys(JSON.parse(`${parts[0]}}`)).sort()).toEqual(
            lastSeq === undefined ? ['format'] : ['format', 'lastSeq'],
          );
        },
      ),
    );
  });
});
