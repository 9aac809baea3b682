/**
 * Reads a normalised price query ("btc", "bitcoin in eur", "eur/usd") into an asset, its kind and a quote
 * currency, so that fiat goes to Frankfurter and everything else to CoinGecko.
 *
 * Grammar (the query is already NFKC, trimmed, lower-cased, whitespace collapsed):
 *   query := [ "price of " ] asset [ " price" | " rate" | " exchange rate" ] [ quote-part ]
 *   quote-part := ( "/" | " in " | " to " | " vs " | " " ) CODE
 * CODE is one of FIAT_CURRENCIES; the quote defaults to USD, or EUR when the asset itself is USD.
 */
import { AppError } from '../core/errors.js';

/** The currencies the ECB publishes and Frankfurter serves: the only quote currencies accepted. */
export const FIAT_CURRENCIES: Readonly<Record<string, string>> = {
  AUD: 'Australian Dollar',
  BGN: 'Bulgarian Lev',
  BRL: 'Brazilian Real',
  CAD: 'Canadian Dollar',
  CHF: 'Swiss Franc',
  CNY: 'Chinese Renminbi Yuan',
  CZK: 'Czech Koruna',
  DKK: 'Danish Krone',
  EUR: 'Euro',
  GBP: 'British Pound',
  HKD: 'Hong Kong Dollar',
  HUF: 'Hungarian Forint',
  IDR: 'Indonesian Rupiah',
  ILS: 'Israeli New Sheqel',
  INR: 'Indian Rupee',
  ISK: 'Icelandic Króna',
  JPY: 'Japanese Yen',
  KRW: 'South Korean Won',
  MXN: 'Mexican Peso',
  MYR: 'Malaysian Ringgit',
  NOK: 'Norwegian Krone',
  NZD: 'New Zealand Dollar',
  PHP: 'Philippine Peso',
  PLN: 'Polish Złoty',
  RON: 'Romanian Leu',
  SEK: 'Swedish Krona',
  SGD: 'Singapore Dollar',
  THB: 'Thai Baht',
  TRY: 'Turkish Lira',
  USD: 'United States Dollar',
  ZAR: 'South African Rand',
};

export interface PriceQuery {
  /** An ISO code (upper case) when `kind` is fiat, else the coin name or symbol as asked. */
  asset: string;
  kind: 'crypto' | 'fiat';
  /** Upper-case ISO code. */
  quote: string;
}

export const DEFAULT_QUOTE = 'USD';

function isFiat(code: string): boolean {
  return Object.hasOwn(FIAT_CURRENCIES, code.toUpperCase());
}

/** Splits off an explicit quote; a 3-letter word after "/", "in", "to" or "vs" must be a known code. */
function splitQuote(query: string): { asset: string; quote?: string } {
  const explicit = /^(.+?)(?:\s*\/\s*|\s+(?:in|to|vs)\s+)([a-z]{3})$/.exec(query);
  if (explicit?.[1] && explicit[2]) {
    if (!isFiat(explicit[2])) {
      throw new AppError(
        'not_found',
        `No quote currency called "${explicit[2]}" is supported; use an ISO code such as ${Object.keys(FIAT_CURRENCIES).join(', ')}.`,
        { field: 'query' },
      );
    }
    return { asset: explicit[1], quote: explicit[2].toUpperCase() };
  }
  const bare = /^(.+?)\s+([a-z]{3})$/.exec(query);
  if (bare?.[1] && bare[2] && isFiat(bare[2])) return { asset: bare[1], quote: bare[2].toUpperCase() };
  return { asset: query };
}

function stripFillers(asset: string): string {
  const stripped = asset
    .replace(/^(?:the\s+)?price\s+of\s+/, '')
    .replace(/\s+(?:price|exchange\s+rate|rate)$/, '')
    .trim();
  return stripped || asset;
}

export function parsePriceQuery(query: string): PriceQuery {
  const normalised = query.trim().toLowerCase().replace(/\s+/g, ' ');
  const split = splitQuote(normalised);
  const asset = stripFillers(split.asset.trim());
  if (isFiat(asset)) {
    const code = asset.toUpperCase();
    const quote = split.quote ?? (code === DEFAULT_QUOTE ? 'EUR' : DEFAULT_QUOTE);
    return { asset: code, kind: 'fiat', quote };
  }
  return { asset, kind: 'crypto', quote: split.quote ?? DEFAULT_QUOTE };
}
