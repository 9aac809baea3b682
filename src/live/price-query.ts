/**
 * Reads a normalised price query ("btc", "bitcoin in eur", "eur/usd", "gold", "aapl", "aapl stock") into an
 * asset, its kind and a quote currency, so that each kind goes to the providers that serve it.
 *
 * Grammar (the query is already NFKC, trimmed, lower-cased, whitespace collapsed):
 *   query := [ "price of " ] asset [ " price" | " spot price" | " rate" | " exchange rate" ] [ quote-part ]
 *   quote-part := ( "/" | " in " | " to " | " vs " | " " ) CODE
 *   asset := marked-stock | FIAT | METAL | other
 *   marked-stock := "$" NAME | ( "stock " | "shares of " ) NAME | NAME ( " stock" | " shares" | " share" )
 *   NAME := a known company name ("apple", "berkshire hathaway") or a ticker: a letter, then up to 9
 *           letters, digits, "." or "-" (aapl, brk.b)
 *   METAL := gold | silver | platinum | palladium | xau | xag | xpt | xpd
 * CODE is one of FIAT_CURRENCIES; the quote defaults to USD, or EUR when the asset itself is USD. A marker
 * makes a stock of anything ("eth stock"); an unmarked `other` is a coin or a stock by the rules of
 * price-classification.ts (a known coin stays a coin; "aapl", "sap.de", "apple" are stocks).
 */
import { AppError } from '../core/errors.js';
import { classifyAsset, companyTicker } from './price-classification.js';

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

/** Precious metals by ISO 4217 code, as gold-api.com serves them (USD per troy ounce). */
export const METALS: Readonly<Record<string, string>> = {
  XAU: 'Gold',
  XAG: 'Silver',
  XPT: 'Platinum',
  XPD: 'Palladium',
};

/** Major coins by symbol, for the exchanges that take symbols (Coinbase, Kraken). */
export const MAJOR_COINS: Readonly<Record<string, string>> = {
  BTC: 'Bitcoin',
  ETH: 'Ethereum',
  SOL: 'Solana',
  DOGE: 'Dogecoin',
  LTC: 'Litecoin',
  ADA: 'Cardano',
  XRP: 'XRP',
  DOT: 'Polkadot',
  USDT: 'Tether',
  USDC: 'USD Coin',
  BCH: 'Bitcoin Cash',
  LINK: 'Chainlink',
  AVAX: 'Avalanche',
  XLM: 'Stellar',
  SHIB: 'Shiba Inu',
};

const COIN_ALIASES: Readonly<Record<string, string>> = { ripple: 'XRP', ether: 'ETH' };

export interface PriceQuery {
  /**
   * Fiat: the ISO code; metal: XAU, XAG, XPT or XPD; stock: the ticker (all upper case). Crypto: the coin
   * name or symbol as asked.
   */
  asset: string;
  kind: 'crypto' | 'fiat' | 'metal' | 'stock';
  /** Upper-case ISO code. */
  quote: string;
  /**
   * Crypto only: the stock ticker the query could also be ("aapl" → AAPL), set when no stock provider is
   * configured to try it, so that a "no such coin" answer can say stocks need AC_FINNHUB_API_KEY.
   */
  ticker?: string;
}

/**
 * The sentence a crypto provider ends its "no such coin" 404 with: for a ticker-shaped query (a stock was
 * possible but no stock provider is configured), that stock prices need AC_FINNHUB_API_KEY.
 */
export function stockHint(query: PriceQuery): string {
  return query.ticker
    ? ` If you meant the stock ${query.ticker}: stock prices need a Finnhub key (AC_FINNHUB_API_KEY), which the operator has not set.`
    : '';
}

export interface ParseOptions {
  /** Whether a stock provider is configured: then an unmarked plain ticker ("aapl") is priced as a stock. */
  stocks?: boolean;
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
    .replace(/\s+(?:(?:spot\s+)?price|exchange\s+rate|rate)$/, '')
    .trim();
  return stripped || asset;
}

const TICKER = /^[a-z][a-z0-9.-]{0,9}$/;
const STOCK_PATTERNS = [/^\$(.+)$/, /^(?:stock|shares\s+of)\s+(.+)$/, /^(.+?)\s+(?:stock|shares?)$/];

/**
 * The ticker of an explicitly marked stock ("$aapl", "stock aapl", "aapl stock", "aapl shares", "apple
 * stock" → AAPL): a known company name gives its ticker, anything ticker-shaped itself.
 */
function stockTicker(asset: string): string | undefined {
  for (const pattern of STOCK_PATTERNS) {
    const name = pattern.exec(asset)?.[1];
    if (!name) continue;
    const ticker = companyTicker(name) ?? (TICKER.test(name) ? name.toUpperCase() : undefined);
    if (ticker) return ticker;
  }
  return undefined;
}

/** "gold" or "xau" → XAU. */
function metalCode(asset: string): string | undefined {
  const code = asset.toUpperCase();
  if (Object.hasOwn(METALS, code)) return code;
  return Object.keys(METALS).find((key) => METALS[key]?.toLowerCase() === asset);
}

/**
 * The exchange symbol and display name of a coin: a major coin by name or symbol, else the query itself
 * upper-cased when it looks like a symbol (2–6 letters); undefined otherwise.
 */
export function coinSymbol(asset: string): { symbol: string; name: string } | undefined {
  const wanted = asset.trim().toLowerCase();
  const byName = Object.keys(MAJOR_COINS).find((symbol) => MAJOR_COINS[symbol]?.toLowerCase() === wanted);
  const symbol =
    byName ?? COIN_ALIASES[wanted] ?? (/^[a-z]{2,6}$/.test(wanted) ? wanted.toUpperCase() : undefined);
  return symbol ? { symbol, name: MAJOR_COINS[symbol] ?? symbol } : undefined;
}

export function parsePriceQuery(query: string, options: ParseOptions = {}): PriceQuery {
  const normalised = query.trim().toLowerCase().replace(/\s+/g, ' ');
  const split = splitQuote(normalised);
  const asset = stripFillers(split.asset.trim());
  const quote = split.quote ?? DEFAULT_QUOTE;
  const ticker = stockTicker(asset);
  if (ticker) return { asset: ticker, kind: 'stock', quote };
  if (isFiat(asset)) {
    const code = asset.toUpperCase();
    return {
      asset: code,
      kind: 'fiat',
      quote: split.quote ?? (code === DEFAULT_QUOTE ? 'EUR' : DEFAULT_QUOTE),
    };
  }
  const metal = metalCode(asset);
  if (metal) return { asset: metal, kind: 'metal', quote };
  const other = classifyAsset(asset, options.stocks ?? false);
  if (other.kind === 'stock') return { asset: other.ticker, kind: 'stock', quote };
  return { asset, kind: 'crypto', quote, ...(other.ticker ? { ticker: other.ticker } : {}) };
}
