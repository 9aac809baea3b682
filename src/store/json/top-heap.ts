/** A bounded heap for a ranked page: the best `size` of the numbers offered, as `better` orders them. */

/** The best `size` of the items offered, by `better`: a heap with the worst kept at its root. */
export class TopHeap {
  private readonly items: number[] = [];

  constructor(
    private readonly size: number,
    private readonly better: (a: number, b: number) => boolean,
  ) {}

  /** The worst item kept, once `size` are: an item must beat it to be kept. */
  worst(): number | undefined {
    return this.items.length === this.size ? this.items[0] : undefined;
  }

  offer(item: number): void {
    const { items } = this;
    if (this.size <= 0) return;
    if (items.length < this.size) {
      items.push(item);
      this.up(items.length - 1);
    } else if (this.better(item, items[0] as number)) {
      items[0] = item;
      this.down(0);
    }
  }

  sorted(): number[] {
    return [...this.items].sort((a, b) => (this.better(a, b) ? -1 : 1));
  }

  /** The root is the worst: a child must never be worse than its parent. */
  private up(i: number): void {
    const { items } = this;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.better(items[parent] as number, items[i] as number)) break;
      [items[parent], items[i]] = [items[i] as number, items[parent] as number];
      i = parent;
    }
  }

  private down(i: number): void {
    const { items } = this;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < items.length && this.better(items[worst] as number, items[left] as number)) worst = left;
      if (right < items.length && this.better(items[worst] as number, items[right] as number)) worst = right;
      if (worst === i) return;
      [items[worst], items[i]] = [items[i] as number, items[worst] as number];
      i = worst;
    }
  }
}
