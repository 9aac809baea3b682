import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { type Coin, pickCoin } from '../../src/live/coingecko.js';
import { coinSymbol, parsePriceQuery } from '../../src/live/price-query.js';

describe('price query grammar', () => {
  it.each([
    ['bitcoin', { asset: 'bitcoin', kind: 'crypto', quote: 'USD' }],
    ['btc', { asset: 'btc', kind: 'crypto', quote: 'USD' }],
    ['bitcoin in eur', { asset: 'bitcoin', kind: 'crypto', quote: 'EUR' }],
    ['btc eur', { asset: 'btc', kind: 'crypto', quote: 'EUR' }],
    ['btc/eur', { asset: 'btc', kind: 'crypto', quote: 'EUR' }],
    ['btc / jpy', { asset: 'btc', kind: 'crypto', quote: 'JPY' }],
    ['eth vs chf', { asset: 'eth', kind: 'crypto', quote: 'CHF' }],
    ['bitcoin price', { asset: 'bitcoin', kind: 'crypto', quote: 'USD' }],
    ['price of ethereum in gbp', { asset: 'ethereum', kind: 'crypto', quote: 'GBP' }],
    ['usd coin', { asset: 'usd coin', kind: 'crypto', quote: 'USD' }],
    ['usd coin in eur', { asset: 'usd coin', kind: 'crypto', quote: 'EUR' }],
    ['shiba inu', { asset: 'shiba inu', kind: 'crypto', quote: 'USD' }],
    ['eur', { asset: 'EUR', kind: 'fiat', quote: 'USD' }],
    ['usd', { asset: 'USD', kind: 'fiat', quote: 'EUR' }],
    ['eur to gbp', { asset: 'EUR', kind: 'fiat', quote: 'GBP' }],
    ['eur/usd', { asset: 'EUR', kind: 'fiat', quote: 'USD' }],
    ['usd jpy', { asset: 'USD', kind: 'fiat', quote: 'JPY' }],
    ['eur exchange rate', { asset: 'EUR', kind: 'fiat', quote: 'USD' }],
    ['gold', { asset: 'XAU', kind: 'metal', quote: 'USD' }],
    ['gold price', { asset: 'XAU', kind: 'metal', quote: 'USD' }],
    ['gold spot price', { asset: 'XAU', kind: 'metal', quote: 'USD' }],
    ['price of silver in eur', { asset: 'XAG', kind: 'metal', quote: 'EUR' }],
    ['platinum', { asset: 'XPT', kind: 'metal', quote: 'USD' }],
    ['palladium gbp', { asset: 'XPD', kind: 'metal', quote: 'GBP' }],
    ['xau/usd', { asset: 'XAU', kind: 'metal', quote: 'USD' }],
    ['xag', { asset: 'XAG', kind: 'metal', quote: 'USD' }],
    ['aapl stock', { asset: 'AAPL', kind: 'stock', quote: 'USD' }],
    ['stock aapl', { asset: 'AAPL', kind: 'stock', quote: 'USD' }],
    ['$aapl', { asset: 'AAPL', kind: 'stock', quote: 'USD' }],
    ['aapl shares', { asset: 'AAPL', kind: 'stock', quote: 'USD' }],
    ['msft share price', { asset: 'MSFT', kind: 'stock', quote: 'USD' }],
    ['price of tsla stock', { asset: 'TSLA', kind: 'stock', quote: 'USD' }],
    ['shares of brk.b', { asset: 'BRK.B', kind: 'stock', quote: 'USD' }],
    ['aapl stock in eur', { asset: 'AAPL', kind: 'stock', quote: 'EUR' }],
    ['aapl', { asset: 'aapl', kind: 'crypto', quote: 'USD', ticker: 'AAPL' }],
    ['eth stock price', { asset: 'ETH', kind: 'stock', quote: 'USD' }],
    ['tether gold', { asset: 'tether gold', kind: 'crypto', quote: 'USD' }],
    ['gold stock', { asset: 'GOLD', kind: 'stock', quote: 'USD' }],
  ])('%s', (query, expected) => {
    expect(parsePriceQuery(query)).toEqual(expected);
  });

  it('rejects an unknown quote currency after an explicit separator', () => {
    expect(() => parsePriceQuery('btc in xyz')).toThrow(AppError);
    expect(() => parsePriceQuery('btc/xyz')).toThrow(/No quote currency called "xyz"/);
  });
});

describe('coinSymbol', () => {
  it.each([
    ['bitcoin', 'BTC', 'Bitcoin'],
    ['BTC', 'BTC', 'Bitcoin'],
    ['ethereum', 'ETH', 'Ethereum'],
    ['solana', 'SOL', 'Solana'],
    ['dogecoin', 'DOGE', 'Dogecoin'],
    ['litecoin', 'LTC', 'Litecoin'],
    ['cardano', 'ADA', 'Cardano'],
    ['ripple', 'XRP', 'XRP'],
    ['xrp', 'XRP', 'XRP'],
    ['polkadot', 'DOT', 'Polkadot'],
    ['tether', 'USDT', 'Tether'],
    ['usd coin', 'USDC', 'USD Coin'],
    ['pepe', 'PEPE', 'PEPE'],
  ])('%s → %s', (asset, symbol, name) => {
    expect(coinSymbol(asset)).toEqual({ symbol, name });
  });

  it('gives nothing for what is neither a known coin nor a 2–6 letter symbol', () => {
    for (const asset of ['x', 'bitcoinz', 'wrapped bitcoin', '1inch', 'btc2']) {
      expect(coinSymbol(asset)).toBeUndefined();
    }
  });
});

describe('pickCoin', () => {
  const coin = (id: string, symbol: string, rank: number | null, name = id): Coin => ({
    id,
    name,
    symbol,
    market_cap_rank: rank,
  });

  it('prefers exact id, then symbol by best rank (unranked last), then name, then the first', () => {
    const coins = [coin('batcat', 'BTC', null), coin('bitcoin', 'BTC', 1), coin('btc', 'XBT', 900)];
    expect(pickCoin(coins, 'btc')?.id).toBe('btc');
    expect(pickCoin(coins.slice(0, 2), 'btc')?.id).toBe('bitcoin');
    expect(pickCoin([coin('a', 'BTC', null), coin('b', 'BTC', null)], 'btc')?.id).toBe('a');
    expect(pickCoin([coin('x', 'X', 5), coin('the-graph', 'GRT', 50, 'The Graph')], 'the graph')?.id).toBe(
      'the-graph',
    );
    expect(pickCoin([coin('x', 'X', 5), coin('y', 'Y', 1)], 'zzz')?.id).toBe('x');
    expect(pickCoin([], 'zzz')).toBeUndefined();
  });
});
