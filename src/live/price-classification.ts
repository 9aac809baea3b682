/**
 * What an asset that is neither a currency nor a metal is: a coin or a stock. Queries arrive lower-cased, so
 * a ticker cannot be told by its case; it is told by its shape and by what it is not. Classification never
 * calls an upstream: the coins it knows are a fixed list here (the ~100 largest by market capitalisation, by
 * symbol and by name), and the companies it knows by name are a short fixed list too.
 *
 * Rules, in order (fiat codes and metals are recognised before these, by the grammar in price-query.ts):
 *   1. a known coin (symbol, name or alias) is crypto, even when it is also a ticker ("eth", "link", "dash");
 *   2. a ticker with a class or exchange suffix ("brk.b", "sap.de", "vod.l") is a stock;
 *   3. a known company name ("apple", "microsoft") is a stock, under its ticker;
 *   4. a plain ticker shape (1–5 letters: "aapl", "msft", "f") is a stock when a stock provider is configured,
 *      else a coin (it may be a small one), remembered as a possible ticker for the 404;
 *   5. anything else is a coin.
 * An explicit marker ("$eth", "eth stock", "shares of eth") makes a stock of anything: see price-query.ts.
 */

/** `SYMBOL Name` pairs separated by ";": the largest coins by market capitalisation (late 2025). */
const TOP_COINS = `
BTC Bitcoin; ETH Ethereum; USDT Tether; XRP XRP; BNB BNB; SOL Solana; USDC USD Coin; TRX TRON; DOGE Dogecoin;
ADA Cardano; STETH Lido Staked Ether; WBTC Wrapped Bitcoin; HYPE Hyperliquid; LINK Chainlink; BCH Bitcoin Cash;
XLM Stellar; SUI Sui; AVAX Avalanche; LEO LEO Token; HBAR Hedera; LTC Litecoin; TON Toncoin; SHIB Shiba Inu;
DOT Polkadot; XMR Monero; DAI Dai; USDE Ethena USDe; UNI Uniswap; CRO Cronos; MNT Mantle; PEPE Pepe; AAVE Aave;
OKB OKB; TAO Bittensor; NEAR NEAR Protocol; ENA Ethena; ETC Ethereum Classic; APT Aptos; ONDO Ondo;
ICP Internet Computer; POL Polygon; MATIC Polygon; KAS Kaspa; ARB Arbitrum; VET VeChain; ALGO Algorand;
ATOM Cosmos; RENDER Render; FIL Filecoin; WLD Worldcoin; SEI Sei; BONK Bonk; FET Fetch.ai; JUP Jupiter;
QNT Quant; TIA Celestia; OP Optimism; INJ Injective; STX Stacks; IMX Immutable; XDC XDC Network; FLR Flare;
GRT The Graph; CRV Curve DAO; PENGU Pudgy Penguins; TRUMP Official Trump; WIF dogwifhat; FLOKI Floki;
PYUSD PayPal USD; FDUSD First Digital USD; LDO Lido DAO; THETA Theta Network; SAND The Sandbox;
MANA Decentraland; AXS Axie Infinity; EGLD MultiversX; XTZ Tezos; EOS EOS; IOTA IOTA; NEO NEO; KAIA Kaia;
FLOW Flow; CAKE PancakeSwap; GALA Gala; CHZ Chiliz; MKR Maker; SKY Sky; ZEC Zcash; DASH Dash; BSV Bitcoin SV;
XEC eCash; KCS KuCoin Token; PAXG PAX Gold; XAUT Tether Gold; JASMY JasmyCoin; RUNE THORChain;
ENS Ethereum Name Service; PYTH Pyth Network; STRK Starknet; ZRO LayerZero; AR Arweave; MINA Mina;
SNX Synthetix; COMP Compound; ZIL Zilliqa; KSM Kusama; QTUM Qtum; 1INCH 1inch; BAT Basic Attention Token;
SUSHI SushiSwap; YFI yearn.finance; APE ApeCoin; DYDX dYdX; HNT Helium; XBT Bitcoin`;

/** Other names people use for a coin. */
const COIN_NICKNAMES = ['ripple', 'ether', 'tron', 'cosmos hub', 'polygon ecosystem token', 'toncoin'];

function parsePairs(table: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const entry of table.split(';')) {
    const [symbol, ...name] = entry.trim().split(' ');
    if (symbol) pairs.set(symbol.toLowerCase(), name.join(' '));
  }
  return pairs;
}

/** Known coins by lower-case symbol → name. */
export const KNOWN_COINS: ReadonlyMap<string, string> = parsePairs(TOP_COINS);

const KNOWN_COIN_WORDS: ReadonlySet<string> = new Set([
  ...KNOWN_COINS.keys(),
  ...[...KNOWN_COINS.values()].map((name) => name.toLowerCase()),
  ...COIN_NICKNAMES,
]);

/** Whether the (lower-case) asset is a known coin's symbol, name or nickname. */
export function isKnownCoin(asset: string): boolean {
  return KNOWN_COIN_WORDS.has(asset);
}

/** Large companies by the name people ask for, → their US ticker (Finnhub's symbol). */
const COMPANIES: Readonly<Record<string, string>> = {
  apple: 'AAPL',
  microsoft: 'MSFT',
  nvidia: 'NVDA',
  alphabet: 'GOOGL',
  google: 'GOOGL',
  amazon: 'AMZN',
  meta: 'META',
  facebook: 'META',
  tesla: 'TSLA',
  'berkshire hathaway': 'BRK.B',
  berkshire: 'BRK.B',
  broadcom: 'AVGO',
  netflix: 'NFLX',
  intel: 'INTC',
  amd: 'AMD',
  oracle: 'ORCL',
  salesforce: 'CRM',
  adobe: 'ADBE',
  ibm: 'IBM',
  walmart: 'WMT',
  'coca-cola': 'KO',
  'coca cola': 'KO',
  pepsico: 'PEP',
  mcdonalds: 'MCD',
  "mcdonald's": 'MCD',
  disney: 'DIS',
  nike: 'NKE',
  boeing: 'BA',
  'jpmorgan chase': 'JPM',
  jpmorgan: 'JPM',
  visa: 'V',
  mastercard: 'MA',
  paypal: 'PYPL',
  coinbase: 'COIN',
  'exxon mobil': 'XOM',
  exxon: 'XOM',
  'johnson & johnson': 'JNJ',
  pfizer: 'PFE',
  uber: 'UBER',
  palantir: 'PLTR',
  sap: 'SAP',
  'novo nordisk': 'NVO',
  toyota: 'TM',
  tsmc: 'TSM',
};

/** The ticker of a known company by name ("apple" → AAPL). */
export function companyTicker(name: string): string | undefined {
  return Object.hasOwn(COMPANIES, name) ? COMPANIES[name] : undefined;
}

/** 1–5 letters: a US ticker such as "f", "aapl", "googl". */
const PLAIN_TICKER = /^[a-z]{1,5}$/;
/** A class suffix (brk.b) or an exchange suffix (sap.de, vod.l, shop.to, 7203.t is not covered). */
const SUFFIXED_TICKER = /^[a-z]{1,5}\.[a-z]{1,3}$/;

/**
 * The shape of a would-be ticker: `suffixed` can only be a stock, `plain` may also be a small coin; undefined
 * when it is not ticker-shaped. Callers rule out fiat codes, metals and known coins first.
 */
export function tickerShape(asset: string): 'plain' | 'suffixed' | undefined {
  if (PLAIN_TICKER.test(asset)) return 'plain';
  if (SUFFIXED_TICKER.test(asset)) return 'suffixed';
  return undefined;
}

/**
 * Coin or stock, for an asset that is neither a fiat code nor a metal. `stocks`: whether a stock provider is
 * configured. A crypto answer may carry `ticker`, the stock it could also have been.
 */
export function classifyAsset(
  asset: string,
  stocks: boolean,
): { kind: 'stock'; ticker: string } | { kind: 'crypto'; ticker?: string } {
  if (isKnownCoin(asset)) return { kind: 'crypto' };
  const company = companyTicker(asset);
  const shape = tickerShape(asset);
  if (shape === 'suffixed') return { kind: 'stock', ticker: asset.toUpperCase() };
  if (company) return { kind: 'stock', ticker: company };
  if (shape === 'plain') {
    const ticker = asset.toUpperCase();
    return stocks ? { kind: 'stock', ticker } : { kind: 'crypto', ticker };
  }
  return { kind: 'crypto' };
}
