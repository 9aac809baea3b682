/**
 * InFlightList, the slot array that holds responses under way (drain) and per-request MCP servers
 * (stateless /mcp): it must behave as the Set it replaces, reuse its slots, and let go of what it held.
 * Its reason to exist (no chain of left-behind hash tables for the young-generation collector) is a speed
 * property, measured by `npm run bench:gc`, not asserted here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InFlightList } from '../../src/http/in-flight-list.js';

describe('InFlightList', () => {
  it('holds what was added until it is removed, and reuses the emptied slot', () => {
    const list = new InFlightList<{ n: number }>();
    const a = { n: 1 };
    const b = { n: 2 };
    const slotA = list.add(a);
    const slotB = list.add(b);
    expect(slotA).not.toBe(slotB);
    expect(list.size).toBe(2);
    expect(list.items()).toEqual([a, b]);

    list.remove(slotA, a);
    expect(list.size).toBe(1);
    expect(list.items()).toEqual([b]);

    const c = { n: 3 };
    expect(list.add(c)).toBe(slotA);
    expect(list.items()).toEqual([c, b]);
  });

  it('ignores a second removal, and a removal naming another item than the slot holds', () => {
    const list = new InFlightList<{ n: number }>();
    const a = { n: 1 };
    const slot = list.add(a);
    list.remove(slot, a);
    const b = { n: 2 };
    expect(list.add(b)).toBe(slot);
    list.remove(slot, a); // a's late second removal must not empty b's slot
    expect(list.size).toBe(1);
    expect(list.items()).toEqual([b]);
  });

  it('items() is a copy: removing while going through it removes each once', () => {
    const list = new InFlightList<{ n: number }>();
    const slots = new Map<{ n: number }, number>();
    for (let n = 0; n < 5; n++) {
      const item = { n };
      slots.set(item, list.add(item));
    }
    const held = list.items();
    for (const item of held) list.remove(slots.get(item) as number, item);
    expect(list.size).toBe(0);
    expect(list.items()).toEqual([]);
    expect(held.map((item) => item.n)).toEqual([0, 1, 2, 3, 4]); // not a live view: still all five
  });

  it('after any sequence of adds and removes, holds exactly what a Set would', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(20)), { maxLength: 200 }), (steps) => {
        const list = new InFlightList<{ id: number }>();
        const model = new Set<{ id: number }>();
        const held: { item: { id: number }; slot: number }[] = [];
        let next = 0;
        let mostAtOnce = 0;
        for (const [adding, pick] of steps) {
          if (adding || held.length === 0) {
            const item = { id: next++ };
            held.push({ item, slot: list.add(item) });
            model.add(item);
          } else {
            const [{ item, slot }] = held.splice(pick % held.length, 1) as [
              { item: { id: number }; slot: number },
            ];
            list.remove(slot, item);
            model.delete(item);
          }
          mostAtOnce = Math.max(mostAtOnce, model.size);
          expect(list.size).toBe(model.size);
        }
        expect(new Set(list.items())).toEqual(model);
        // The slots are reused: the array never grows past the most items held at once.
        const slotsUsed = new Set(held.map((h) => h.slot));
        expect(slotsUsed.size).toBe(held.length);
        for (const slot of slotsUsed) expect(slot).toBeLessThan(Math.max(mostAtOnce, 1));
      }),
      { numRuns: 200 },
    );
  });
});
