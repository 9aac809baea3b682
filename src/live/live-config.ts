/** What the upstream providers need to know, taken from the service Config by the composition root. */
export interface LiveConfig {
  /** Sent as User-Agent on every upstream call. */
  userAgent: string;
  /** Per upstream call, in milliseconds. */
  timeoutMs: number;
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
  };
  /** Optional CoinGecko demo key, sent as `x-cg-demo-api-key`. */
  coingeckoApiKey?: string;
}

export const DEFAULT_UPSTREAM_URLS: LiveConfig['urls'] = {
  openMeteoGeocoding: 'https://geocoding-api.open-meteo.com',
  openMeteoForecast: 'https://api.open-meteo.com',
  coingecko: 'https://api.coingecko.com',
  frankfurter: 'https://api.frankfurter.dev',
  hnAlgolia: 'https://hn.algolia.com',
  duckduckgo: 'https://api.duckduckgo.com',
  wikipedia: 'https://en.wikipedia.org',
};
