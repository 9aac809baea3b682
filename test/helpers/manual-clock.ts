/** A clock tests move by hand, so cache ages, rate windows and UTC days need no sleeping. */
import type { Clock } from '../../src/core/clock.js';

export class ManualClock implements Clock {
  constructor(private ms = Date.parse('2026-11-21T12:00:00.000Z')) {}
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
