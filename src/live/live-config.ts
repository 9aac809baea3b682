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
