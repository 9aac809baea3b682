/**
 * The upstream side of live data behind the core's LiveDataSource port: per query type an ordered chain
 * of providers (fail-over, breakers, token buckets, one time budget); prices are classified first and go
 * to the chain for their kind. Results are normalised once more here, whichever provider answered: news
 * deduplicated and newest first, search results numbered.
 */
import { AppError } from '../core/errors.js';
import type { LiveDataSource, LiveResult } from '../core/live-port.js';
import type { QueryType } from '../core/model.js';
import { createHttpClient } from './http-client.js';
import { type LiveConfig, PROVIDER_IDS } from './live-config.js';
import { type NewsItem, normaliseNewsItems } from './news-items.js';
import { type PriceQuery, parsePriceQuery } from './price-query.js';
import { type ChainOptions, ProviderChain } from './provider-chain.js';
import { ordered, type PriceKind, providerCatalogue } from './providers.js';

const PRICE_KINDS: readonly PriceKind[] = ['fiat', 'crypto', 'metal', 'stock'];

function noProviderFor(kind: PriceKind): AppError {
  return new AppError(
    'not_found',
    kind === 'stock'
      ? 'Stock prices are not served here: the operator has not configured a stock provider (AC_FINNHUB_API_KEY).'
      : `Prices of this kind (${kind}) are not served here: no provider for it is configured.`,
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

/** The one HTTP client the providers share, as the configuration sets it up. */
export function httpClientFor(config: LiveConfig) {
  return createHttpClient({ userAgent: config.userAgent, timeoutMs: config.timeoutMs, ...config.retry });
}

export function createLiveDataSource(config: LiveConfig, options: ChainOptions = {}): LiveDataSource {
  const http = httpClientFor(config);
  const catalogue = providerCatalogue(http, config);
  const order = { ...PROVIDER_IDS, ...config.providers };
  const chains = {
    weather: new ProviderChain('weather', ordered(catalogue.weather, order.weather), options),
    news: new ProviderChain('news', ordered(catalogue.news, order.news), options),
    search: new ProviderChain('search', ordered(catalogue.search, order.search), options),
  };
  const pricing = ordered(catalogue.price, order.price);
  const priceChains = new Map<PriceKind, ProviderChain<PriceQuery>>();
  for (const kind of PRICE_KINDS) {
    const members = pricing.filter((p) => p.kinds.includes(kind));
    if (kind === 'stock' && !config.finnhubApiKey) continue;
    if (members.length > 0) priceChains.set(kind, new ProviderChain(`${kind} price`, members, options));
  }

  return {
    async fetch(type: QueryType, query: string): Promise<LiveResult> {
      if (type === 'price') {
        const parsed = parsePriceQuery(query);
        const chain = priceChains.get(parsed.kind);
        if (!chain) throw noProviderFor(parsed.kind);
        return chain.fetch(parsed);
      }
      return finish(type, await chains[type].fetch(query));
    },
  };
}
