/**
 * A refusal raised inside a transaction of the charge port (store/transaction-charges.ts): thrown by a rule
 * function so that the transaction writes nothing, and answered as the refusal.
 */
import type { ChargeRefusal } from './charge-port.js';

export class ChargeRefused extends Error {
  constructor(readonly refusal: ChargeRefusal) {
    super(`The charge was refused (${refusal.refused}).`);
  }
}

/** Refuses the charged operation under way: nothing it wrote is kept. */
export function refuse(refusal: ChargeRefusal): never {
  throw new ChargeRefused(refusal);
}
