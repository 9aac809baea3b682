/** Live data: one query (POST /api/ac/data) with its normalised result, source, freshness and cost. */
import { useState } from 'preact/hooks';
import { agentKey, call } from '../api';
import { CostNote, ErrorMessage, Item, PageHeading, Time } from '../components';
import { ago, cents, duration } from '../format';
import type { DataAnswer, QueryType } from '../types';

const EXAMPLES: Record<QueryType, string> = {
  weather: 'Berlin, DE',
  price: 'bitcoin in eur',
  news: 'open source databases',
  search: 'prometheus text format',
};

const STATES: Record<string, string> = {
  fresh: 'fetched from the provider for this request',
  hit: 'served from the cache',
  stale: 'an older cached result, because every provider failed',
  shared_flight: 'the result of an identical request’s fetch, joined',
};

export function LiveDataPage(props: { focus: boolean }) {
  const [queryType, setQueryType] = useState<QueryType>('weather');
  const [query, setQuery] = useState('');
  const [cacheMinutes, setCacheMinutes] = useState('15');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [answer, setAnswer] = useState<{ request: string; body: DataAnswer; at: number } | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const minutes = Number(cacheMinutes);
    if (!query.trim()) {
      setError(new Error('Enter a query.'));
      return;
    }
    if (!Number.isInteger(minutes) || minutes < -1 || minutes > 1440) {
      setError(new Error('Cache minutes must be a whole number from -1 to 1440.'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const res = await call<DataAnswer>('/api/ac/data', {
        method: 'POST',
        body: { agent_key: agentKey(), query_type: queryType, query: query.trim(), cache_minutes: minutes },
      });
      setAnswer({ request: `${queryType}: ${query.trim()}`, body: res.body, at: Date.now() });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeading title="Live data" focus={props.focus} />
      <section class="card" aria-labelledby="live-form-title">
        <h2 id="live-form-title" class="visually-hidden">
          Ask for live data
        </h2>
        <form class="live-form" onSubmit={submit}>
          <div class="field">
            <label for="query-type">Kind</label>
            <select
              id="query-type"
              value={queryType}
              onChange={(e) => setQueryType(e.currentTarget.value as QueryType)}
            >
              <option value="weather">weather</option>
              <option value="price">price</option>
              <option value="news">news</option>
              <option value="search">search</option>
            </select>
          </div>
          <div class="field grow">
            <label for="live-query">Query</label>
            <input
              id="live-query"
              type="text"
              value={query}
              placeholder={`e.g. ${EXAMPLES[queryType]}`}
              onInput={(e) => setQuery(e.currentTarget.value)}
              maxLength={500}
            />
          </div>
          <div class="field small">
            <label for="cache-minutes">Cache minutes</label>
            <input
              id="cache-minutes"
              type="number"
              min={-1}
              max={1440}
              step={1}
              value={cacheMinutes}
              onInput={(e) => setCacheMinutes(e.currentTarget.value)}
              aria-describedby="cache-minutes-hint"
            />
          </div>
          <div class="actions end">
            <button type="submit" class="primary" disabled={busy}>
              {busy ? 'Asking…' : 'Run query'}
            </button>
          </div>
        </form>
        <p id="cache-minutes-hint" class="hint">
          A cached result at most this many minutes old is served free; 0 always fetches fresh; -1 serves only
          the cache, of any age.
        </p>
        <CostNote>
          A fresh answer costs 2 cents; an answer from the cache is free. Failures cost nothing.
        </CostNote>
      </section>
      <ErrorMessage error={error} />
      {answer ? <Result request={answer.request} answer={answer.body} at={answer.at} /> : null}
    </>
  );
}

function Result({ request, answer, at }: { request: string; answer: DataAnswer; at: number }) {
  const state = answer.cache_state ?? (answer.from_cache ? 'hit' : 'fresh');
  const cachedAt = answer.cached_at ?? answer.fetched_at;
  return (
    <section class="card" aria-labelledby="result-title" data-testid="live-result">
      <h2 id="result-title">Result for {request}</h2>
      {answer.stale ? (
        <p class="message message-info">Every provider failed; this is an older result from the cache.</p>
      ) : null}
      {answer.freshness_note ? <p class="message message-info">{answer.freshness_note}</p> : null}
      <div class="result-grid">
        <dl class="items compact">
          <Item term="Source">
            <span data-testid="live-source">{answer.source}</span>
            {answer.providers_asked && answer.providers_asked.length > 1
              ? ` (asked: ${answer.providers_asked.join(', ')})`
              : ''}
          </Item>
          <Item term="Served">
            <span class="badge" data-testid="live-state">
              {state}
            </span>{' '}
            {STATES[state] ?? ''}
          </Item>
          <Item term="Fetched">
            <Time iso={cachedAt} />{' '}
            {answer.cache_age_s !== undefined
              ? `(${duration(answer.cache_age_s)} old)`
              : `(${ago(cachedAt, at)})`}
          </Item>
          {answer.as_of ? (
            <Item term="Provider’s time">
              <Time iso={answer.as_of} />
            </Item>
          ) : null}
          <Item term="Cost">
            <span data-testid="live-cost">{cents(answer.cost_cents)}</span>
          </Item>
          <Item term="Balance after">{cents(answer.credit_balance_cents)}</Item>
        </dl>
        <Data data={answer.data} />
      </div>
      <details>
        <summary>The data as JSON</summary>
        <pre class="json">{JSON.stringify(answer.data, null, 2)}</pre>
      </details>
    </section>
  );
}

function safeUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

function str(value: unknown): string {
  return value === null || value === undefined ? '—' : String(value);
}

/** The normalised data, readably, for the shapes the API documents; anything else only as JSON. */
function Data({ data }: { data: unknown }) {
  if (!data || typeof data !== 'object') return null;
  const d = data as Record<string, unknown>;
  if (d.location && typeof d.location === 'object' && 'temperature_c' in d) {
    const loc = d.location as Record<string, unknown>;
    return (
      <div class="data">
        <p class="figure">
          {str(d.temperature_c)} °C <span class="figure-note">{str(d.condition)}</span>
        </p>
        <dl class="items compact">
          <Item term="Place">{[loc.name, loc.admin1, loc.country].filter(Boolean).join(', ')}</Item>
          <Item term="Feels like">{str(d.feels_like_c)} °C</Item>
          <Item term="Humidity">{str(d.humidity_pct)} %</Item>
          <Item term="Wind">{str(d.wind_kph)} km/h</Item>
          <Item term="Observed">
            <Time iso={typeof d.observed_at === 'string' ? d.observed_at : null} />
          </Item>
        </dl>
      </div>
    );
  }
  if (d.asset && typeof d.asset === 'object' && 'price' in d) {
    const asset = d.asset as Record<string, unknown>;
    return (
      <div class="data">
        <p class="figure">
          {str(d.price)} {str(d.currency)}{' '}
          <span class="figure-note">
            {str(asset.name)} ({str(asset.symbol)}, {str(asset.kind)})
          </span>
        </p>
        {typeof d.change_24h_pct === 'number' ? <p>24 h change: {d.change_24h_pct.toFixed(2)} %</p> : null}
      </div>
    );
  }
  const raw = Array.isArray(d.items) ? d.items : Array.isArray(d.results) ? d.results : undefined;
  const list = raw?.map((item: unknown) =>
    item && typeof item === 'object' ? (item as Record<string, unknown>) : {},
  );
  if (list) {
    if (list.length === 0) return <p>No items: the providers had nothing on this.</p>;
    return (
      <ol class="data-list">
        {list.map((item, i) => {
          const href = safeUrl(item.url);
          const title = str(item.title);
          return (
            <li key={i}>
              {href ? (
                <a href={href} rel="noopener noreferrer" target="_blank">
                  {title}
                </a>
              ) : (
                <strong>{title}</strong>
              )}
              <span class="hint">
                {[
                  item.source,
                  item.published_at ? String(item.published_at).slice(0, 16).replace('T', ' ') : null,
                ]
                  .filter(Boolean)
                  .join(' · ')}
              </span>
              {item.snippet ? <p>{String(item.snippet)}</p> : null}
            </li>
          );
        })}
      </ol>
    );
  }
  return null;
}
