/** The prices of the spec's table, in cents. The only place a price is written. */
export const PRICES = Object.freeze({
  memoryOp: 1,
  liveDataFresh: 2,
  liveDataCached: 0,
  memoryDelete: 0,
  starterCredit: 50,
});

export const SERVICE_NAME = 'agent-context';
export const SERVICE_VERSION = '1.0.0';
