/**
 * The set-up the live-data tests share: a fake upstream started before the suite, closed after it, and by
 * default forgotten and re-routed before each test, so that each test sees only its own requests.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type FakeHandler, type FakeUpstream, startFakeUpstream } from './fake-upstream.js';

export type FakeRoutes = Record<string, FakeHandler>;

export interface UseFakeUpstreamOptions {
  /** The routes; a function is called with the running upstream (for bodies that name its URL). */
  routes?: FakeRoutes | ((upstream: FakeUpstream) => FakeRoutes);
  /**
   * `'each'` (the default): before each test, forget routes and requests, then set the routes again.
   * `'once'`: set the routes when the upstream starts and keep them, and the requests, for the whole suite.
   */
  reset?: 'each' | 'once';
}

/**
 * Registers the vitest hooks for one fake upstream in the enclosing `describe` and returns an accessor: an
 * object that reads through to the running upstream (so `up.url` or `up.requests` inside a test or hook are
 * the live values). Touching it outside a test or a later hook throws.
 */
export function useFakeUpstream(options: UseFakeUpstreamOptions = {}): FakeUpstream {
  const { routes, reset = 'each' } = options;
  let running: FakeUpstream | undefined;
  const current = (): FakeUpstream => {
    if (!running) throw new Error('useFakeUpstream: the fake upstream is not running (use it inside a test)');
    return running;
  };
  const table = (upstream: FakeUpstream): FakeRoutes =>
    typeof routes === 'function' ? routes(upstream) : (routes ?? {});

  beforeAll(async () => {
    running = await startFakeUpstream();
    if (reset === 'once')
      for (const [path, handler] of Object.entries(table(running))) running.route(path, handler);
  });
  afterAll(async () => {
    await running?.close();
    running = undefined;
  });
  if (reset === 'each') {
    beforeEach(() => {
      const upstream = current();
      upstream.reset();
      for (const [path, handler] of Object.entries(table(upstream))) upstream.route(path, handler);
    });
  }

  return {
    get url() {
      return current().url;
    },
    get port() {
      return current().port;
    },
    get requests() {
      return current().requests;
    },
    route: (path, handler) => current().route(path, handler),
    reset: () => current().reset(),
    close: () => current().close(),
  };
}
