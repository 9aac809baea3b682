/**
 * The upstream side of live data behind the core's LiveDataSource port: per query type an ordered chain
 * of providers (fail-over, breakers, token buckets, one time budget); prices are classified first and go
 * to the chain for their kind; news and search without hits go on to the next provider. Results are normalised once more here, whichever provider answered: news
 * deduplicated and newest first, search results numbered.
 */
import { AppError } from '../core/errors.js';
import type { LiveDataSource, LiveResult } from '../core/live-port.js';
import type { QueryType } from '../core/model.js';
import { createHttpClient } from './http-client.js';
import type { LiveConfig } from './live-config.js';
import { type NewsItem, normaliseNewsItems } from './news-items.js';
import { type PriceQuery, parsePriceQuery } from './price-query.js';
import { type ChainOptions, ProviderChain } from './provider-chain.js';
import { joinVariables, type PriceKind } from './provider-descriptor.js';
import { PROVIDERS } from './provider-list.js';
import { chainMembers, priceMembers } from './providers.js';

const PRICE_KINDS: readonly PriceKind[] = ['fiat', 'crypto', 'metal', 'stock'];

/**
 * Why a price kind has no chain. A kind that only conditional providers serve (stocks: Finnhub with its key)
 * names the variables the operator would set; otherwise the configured order left its providers out.
 */
function noProviderFor(kind: PriceKind): AppError {
  const servers = PROVIDERS.filter((provider) => provider.serves.price?.kinds.includes(kind));
  const needs = servers.map(joinVariables);
  if (servers.length > 0 && needs.every((variables) => variables.length > 0)) {
    const title = `${kind[0]?.toUpperCase()}${kind.slice(1)}`;
    return new AppError(
      'not_found',
      `${title} prices are not served here: the operator has not configured a ${kind} provider (${needs.flat().join(', ')}).`,
    );
  }
  return new AppError(
    'not_found',
    `Prices of this kind (${kind}) are not served here: no provider for it is configured.`,
  );
}

function finish(type: QueryType, result: LiveResult): LiveResult {
  if (type === 'news' && Array.isArray(result.data.items)) {
    return {
      ...result,
      data: { ...result.data, items: normaliseNewsItems(result.data.items as NewsItem[]) },
    };
  }
  return result;
}

/**
 * Whether a valid result holds nothing, so the chain asks the next provider: news without items, search
 * without results. Weather and prices are never empty (a provider without the place or asset says not_found).
 */
export function isEmptyResult(type: QueryType, result: LiveResult): boolean {
  const list = type === 'news' ? result.data.items : type === 'search' ? result.data.results : undefined;
  return Array.isArray(list) && list.length === 0;
}

/** The one HTTP client the providers share, as the configuration sets it up. */
export function httpClientFor(config: LiveConfig) {
  return createHttpClient({ userAgent: config.userAgent, timeoutMs: config.timeoutMs, ...config.retry });
}

export interface LiveChains {
  weather: ProviderChain;
  news: ProviderChain;
  search: ProviderChain;
  /** One chain per asset kind that some configured provider prices. */
  prices: Map<PriceKind, ProviderChain<PriceQuery>>;
}

/** The chains the configuration sets up, sharing one HTTP client. */
export function createChains(config: LiveConfig, options: ChainOptions = {}): LiveChains {
  const http = httpClientFor(config);
  const pricing = priceMembers(http, config);
  const prices = new Map<PriceKind, ProviderChain<PriceQuery>>();
  for (const kind of PRICE_KINDS) {
    const members = pricing.filter((p) => p.kinds.includes(kind));
    if (members.length > 0) prices.set(kind, new ProviderChain(`${kind} price`, members, options));
  }
  return {
    weather: new ProviderChain('weather', chainMembers('weather', http, config), options),
    news: new ProviderChain('news', chainMembers('news', http, config), {
      ...options,
      isEmpty: (result) => isEmptyResult('news', result),
    }),
    search: new ProviderChain('search', chainMembers('search', http, config), {
      ...options,
      isEmpty: (result) => isEmptyResult('search', result),
    }),
    prices,
  };
}

export function createLiveDataSource(config: LiveConfig, options: ChainOptions = {}): LiveDataSource {
  const { prices, ...chains } = createChains(config, options);
  return {
    async fetch(type: QueryType, query: string): Promise<LiveResult> {
      if (type === 'price') {
        const parsed = parsePriceQuery(query, { stocks: prices.has('stock') });
        const chain = prices.get(parsed.kind);
        if (!chain) throw noProviderFor(parsed.kind);
        return chain.fetch(parsed);
      }
      return finish(type, await chains[type].fetch(query));
    },
  };
}
