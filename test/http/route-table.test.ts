/** The route table's own rules (src/http/route-table.ts); the routes themselves are tested through the API. */
import { describe, expect, it } from 'vitest';
import { createRouteTable, routePath } from '../../src/http/route-table.js';

describe('the route table', () => {
  it('looks paths up in lower case without one trailing slash', () => {
    expect(routePath('/API/ac/Memory/')).toBe('/api/ac/memory');
    expect(routePath('/api/ac/memory')).toBe('/api/ac/memory');
    expect(routePath('/')).toBe('/');
    expect(routePath('/api/ac/memory//')).toBe('/api/ac/memory/');
  });

  it('refuses a route declared twice, whatever its spelling', () => {
    const routes = createRouteTable();
    routes.add('GET', '/api/ac/ping', () => undefined);
    expect(() => routes.add('GET', '/API/ac/ping/', () => undefined)).toThrow(/declared twice/);
    expect(() => routes.add('POST', '/api/ac/ping', () => undefined)).not.toThrow();
  });
});
