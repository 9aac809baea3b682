/**
 * The providers of each kind of data, in their default order (keyed or configured ones join only when
 * their key or URL is set). AC_WEATHER_PROVIDERS and friends pick and order from these.
 */
export const PROVIDER_IDS = {
  weather: ['open-meteo', 'wttr'],
  price: ['frankfurter', 'coingecko', 'coinbase', 'kraken', 'gold-api', 'finnhub'],
  news: ['brave', 'hn-algolia', 'google-news', 'gdelt'],
  search: ['searxng', 'brave', 'duckduckgo'],
} as const;

export type ProviderOrder = { [K in keyof typeof PROVIDER_IDS]: readonly (typeof PROVIDER_IDS)[K][number][] };

/** What the upstream providers need to know, taken from the service Config by the composition root. */
export interface LiveConfig {
  /** Sent as User-Agent on every upstream call. */
  userAgent: string;
  /** Per upstream call, in milliseconds. */
  timeoutMs: number;
  /** Retry tuning (defaults: 2 retries, backoff 500 ms doubling to at most 8 s); tests shorten it. */
  retry?: { maxRetries?: number; backoffBaseMs?: number; backoffMaxMs?: number };
  /**
   * Base URLs (scheme, host and port only; each provider appends its documented path).
   * Defaults are the real public hosts.
   */
  urls: {
    openMeteoGeocoding: string;
    openMeteoForecast: string;
    coingecko: string;
    frankfurter: string;
    hnAlgolia: string;
    duckduckgo: string;
    wikipedia: string;
    wttr: string;
    coinbase: string;
    kraken: string;
    goldApi: string;
    googleNews: string;
    gdelt: string;
    brave: string;
    finnhub: string;
    /** A SearXNG instance; search uses it first when set. No default. */
    searxng?: string;
  };
  /** Which providers each chain holds, in order (default: PROVIDER_IDS). */
  providers?: Partial<ProviderOrder>;
  /** Optional CoinGecko demo key, sent as `x-cg-demo-api-key`. */
  coingeckoApiKey?: string;
  /** Brave Search key (`X-Subscription-Token`): Brave news and web search go first when set. */
  braveApiKey?: string;
  /** Finnhub key (`token=`): stock prices are served only when set. */
  finnhubApiKey?: string;
}

export const DEFAULT_UPSTREAM_URLS: Required<Omit<LiveConfig['urls'], 'searxng'>> = {
  openMeteoGeocoding: 'https://geocoding-api.open-meteo.com',
  openMeteoForecast: 'https://api.open-meteo.com',
  coingecko: 'https://api.coingecko.com',
  frankfurter: 'https://api.frankfurter.dev',
  hnAlgolia: 'https://hn.algolia.com',
  duckduckgo: 'https://api.duckduckgo.com',
  wikipedia: 'https://en.wikipedia.org',
  wttr: 'https://wttr.in',
  coinbase: 'https://api.coinbase.com',
  kraken: 'https://api.kraken.com',
  goldApi: 'https://api.gold-api.com',
  googleNews: 'https://news.google.com',
  gdelt: 'https://api.gdeltproject.org',
  brave: 'https://api.search.brave.com',
  finnhub: 'https://finnhub.io',
};
