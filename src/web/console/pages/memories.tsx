/**
 * Memories: list and search them (POST /api/ac/memory/search: types as a filter, text as a ranked query),
 * open one from the list, edit it (a store, conditional on its version), delete it, read its history and
 * restore a version.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, agentKey, call } from '../api';
import {
  ConfirmDialog,
  CostNote,
  ErrorMessage,
  Item,
  Marked,
  PageHeading,
  Pager,
  StatusMessage,
  Time,
  useCursorPages,
  useLoad,
} from '../components';
import type { HistoryAnswer, Memory, MemoryType, RestoreAnswer, SearchAnswer, StoreAnswer } from '../types';
import { MEMORY_TYPES } from '../types';

const PAGE_SIZE = 20;

interface Search {
  query: string;
  types: MemoryType[];
  round: number;
}

async function searchMemories(search: Search, cursor: string | undefined): Promise<SearchAnswer> {
  const body: Record<string, unknown> = { agent_key: agentKey(), limit: PAGE_SIZE };
  if (search.query) body.query = search.query;
  if (search.types.length > 0 && search.types.length < MEMORY_TYPES.length) {
    body.filter = { memory_types: search.types };
  }
  if (cursor) body.cursor = cursor;
  return (await call<SearchAnswer>('/api/ac/memory/search', { method: 'POST', body })).body;
}

/** The memory stored under `key` now, found by a ranked search on its key (1 cent), or null. */
async function findMemory(key: string): Promise<Memory | null> {
  const answer = await call<SearchAnswer>('/api/ac/memory/search', {
    method: 'POST',
    body: { agent_key: agentKey(), query: key.slice(0, 500), filter: { key_prefix: key }, limit: 10 },
  });
  return answer.body.memories.find((m) => m.memory_key === key) ?? null;
}

function preview(m: Memory) {
  if (m.snippet) return <Marked text={m.snippet} />;
  return m.memory_value.length > 160 ? `${m.memory_value.slice(0, 160)}…` : m.memory_value;
}

export function MemoriesPage(props: { focus: boolean }) {
  const [query, setQuery] = useState('');
  const [types, setTypes] = useState<MemoryType[]>([]);
  const [search, setSearch] = useState<Search | null>(null);
  const pages = useCursorPages();
  const [selected, setSelected] = useState<Memory | 'new' | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  // The answer to the current search and page (none before the first search).
  const found = useLoad(
    async () => (search ? searchMemories(search, pages.cursor) : null),
    [search, pages.cursor],
  );
  const answer = found.data ?? null;
  const setAnswer = found.setData;
  const loading = search !== null && found.loading;
  const { error } = found;

  const submit = (event: Event) => {
    event.preventDefault();
    pages.first();
    setStatus(null);
    setSearch({ query: query.trim(), types, round: (search?.round ?? 0) + 1 });
  };
  const toggle = (type: MemoryType, on: boolean) =>
    setTypes((current) => (on ? [...current, type] : current.filter((t) => t !== type)));

  const replace = (memory: Memory) => {
    setSelected(memory);
    setAnswer((current) => {
      if (!current) return current;
      const found = current.memories.some((m) => m.memory_key === memory.memory_key);
      return {
        ...current,
        memories: found
          ? current.memories.map((m) => (m.memory_key === memory.memory_key ? memory : m))
          : [memory, ...current.memories],
        total: found ? current.total : current.total + 1,
        count: found ? current.count : current.count + 1,
      };
    });
  };
  const remove = (key: string) => {
    setSelected(null);
    setAnswer((current) =>
      current
        ? {
            ...current,
            memories: current.memories.filter((m) => m.memory_key !== key),
            total: Math.max(0, current.total - 1),
            count: Math.max(0, current.count - 1),
          }
        : current,
    );
  };

  const searching = query.trim() !== '';
  return (
    <>
      <PageHeading title="Memories" focus={props.focus} />
      <section class="card" aria-labelledby="find-title">
        <h2 id="find-title" class="visually-hidden">
          Find memories
        </h2>
        <form class="search-form" onSubmit={submit}>
          <div class="field grow">
            <label for="memory-query">Search text</label>
            <input
              id="memory-query"
              type="search"
              value={query}
              onInput={(e) => setQuery(e.currentTarget.value)}
              aria-describedby="memory-query-hint"
              maxLength={500}
            />
            <span id="memory-query-hint" class="hint">
              Words in keys, values and metadata, best match first. Empty: list the most recently updated.
            </span>
          </div>
          <fieldset class="types">
            <legend>Types</legend>
            {MEMORY_TYPES.map((type) => (
              <label key={type} class="check">
                <input
                  type="checkbox"
                  checked={types.includes(type)}
                  onChange={(e) => toggle(type, e.currentTarget.checked)}
                />
                {type}
              </label>
            ))}
          </fieldset>
          <div class="actions">
            <button type="submit" class="primary" disabled={loading}>
              {searching ? 'Search' : 'List memories'}
            </button>
            <button
              type="button"
              onClick={() => {
                setStatus(null);
                setSelected('new');
              }}
            >
              New memory
            </button>
          </div>
        </form>
        <CostNote>
          Each page of a list or search costs 1 cent; opening a memory from the list is free. Saving,
          restoring and reading the history cost 1 cent each; deleting is free.
        </CostNote>
      </section>

      <StatusMessage text={status} />
      <div class="split">
        <section class="card results" aria-labelledby="results-title" aria-busy={loading}>
          <h2 id="results-title">{search?.query ? `Results for “${search.query}”` : 'Memories'}</h2>
          <ErrorMessage error={error} />
          {!search ? <p>Choose “List memories” or search to see them.</p> : null}
          {loading && !answer ? <p>Loading…</p> : null}
          {answer ? (
            <>
              <p class="hint" data-testid="memory-total">
                {answer.total === 0
                  ? 'No memory matches.'
                  : `${answer.total} ${answer.total === 1 ? 'memory matches' : 'memories match'}; showing ${answer.count}.`}
              </p>
              <ul class="memory-list" data-testid="memory-list">
                {answer.memories.map((m) => (
                  <li
                    key={m.memory_key}
                    class={
                      selected !== 'new' && selected?.memory_key === m.memory_key
                        ? 'memory selected'
                        : 'memory'
                    }
                  >
                    <div class="memory-head">
                      <button
                        type="button"
                        class="link memory-key"
                        aria-current={
                          selected !== 'new' && selected?.memory_key === m.memory_key ? 'true' : undefined
                        }
                        onClick={() => {
                          setStatus(null);
                          setSelected(m);
                        }}
                      >
                        {m.memory_key}
                      </button>
                      <span class={`badge type-${m.memory_type}`}>{m.memory_type}</span>
                    </div>
                    <p class="memory-preview">{preview(m)}</p>
                    <p class="hint">
                      Version {m.version} · updated <Time iso={m.updated_at} />
                    </p>
                  </li>
                ))}
              </ul>
              <Pager
                label="Memory pages"
                hasPrevious={pages.hasPrevious}
                hasNext={Boolean(answer?.next_cursor) && !loading && !error}
                busy={loading}
                onPrevious={pages.back}
                onNext={() => pages.forward(answer?.next_cursor)}
                note={`Page ${pages.page} · 1 ¢ a page`}
              />
            </>
          ) : null}
        </section>
        {selected ? (
          <MemoryDetail
            key={selected === 'new' ? '\u0000new' : selected.memory_key}
            memory={selected === 'new' ? null : selected}
            onSaved={(memory, message) => {
              replace(memory);
              setStatus(message);
            }}
            onDeleted={(key) => {
              remove(key);
              setStatus(`Deleted the memory “${key}”.`);
            }}
            onClose={() => setSelected(null)}
          />
        ) : null}
      </div>
    </>
  );
}

function MemoryDetail(props: {
  memory: Memory | null;
  onSaved: (memory: Memory, message: string) => void;
  onDeleted: (key: string) => void;
  onClose: () => void;
}) {
  const m = props.memory;
  const heading = useRef<HTMLHeadingElement>(null);
  const [key, setKey] = useState(m?.memory_key ?? '');
  const [value, setValue] = useState(m?.memory_value ?? '');
  const [type, setType] = useState<MemoryType>(m?.memory_type ?? 'context');
  const [metadata, setMetadata] = useState(m ? JSON.stringify(m.metadata, null, 2) : '{}');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [conflict, setConflict] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [history, setHistory] = useState<HistoryAnswer | null>(null);

  useEffect(() => heading.current?.focus(), []);
  // A new version (saved, restored or reloaded) is what the form edits from now on.
  useEffect(() => {
    if (!m) return;
    setValue(m.memory_value);
    setType(m.memory_type);
    setMetadata(JSON.stringify(m.metadata, null, 2));
  }, [m?.memory_key, m?.version]);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setConflict(false);
    try {
      await work();
    } catch (err) {
      setError(err);
      if (err instanceof ApiError && err.status === 412) setConflict(true);
    } finally {
      setBusy(false);
    }
  };

  const save = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      let meta: unknown;
      try {
        meta = JSON.parse(metadata || '{}');
      } catch {
        throw new Error('Metadata must be a JSON object, such as {"source": "chat"}.');
      }
      if (!meta || typeof meta !== 'object' || Array.isArray(meta)) {
        throw new Error('Metadata must be a JSON object, such as {"source": "chat"}.');
      }
      const memoryKey = m ? m.memory_key : key.trim();
      if (!memoryKey) throw new Error('Give the memory a key.');
      const answer = await call<StoreAnswer>('/api/ac/memory', {
        method: 'POST',
        headers: m ? { 'If-Match': `"${m.version}"` } : { 'If-None-Match': '*' },
        body: {
          agent_key: agentKey(),
          memory_key: memoryKey,
          memory_value: value,
          memory_type: type,
          metadata: meta,
        },
      });
      setHistory(null);
      props.onSaved(
        answer.body.memory,
        answer.body.created
          ? `Stored the new memory “${memoryKey}” (1 ¢).`
          : `Saved “${memoryKey}” as version ${answer.body.memory.version} (1 ¢).`,
      );
    });
  };

  const remove = () => {
    setConfirmDelete(false);
    if (!m) return;
    void run(async () => {
      await call('/api/ac/memory', {
        method: 'DELETE',
        headers: { 'If-Match': `"${m.version}"` },
        body: { agent_key: agentKey(), memory_key: m.memory_key },
      });
      props.onDeleted(m.memory_key);
    });
  };

  const loadHistory = () => {
    if (!m) return;
    void run(async () => {
      // The key goes in the header only: memory_history does not need agent_key, and a URL must not hold it.
      const answer = await call<HistoryAnswer>('/api/ac/memory/history', {
        query: { memory_key: m.memory_key },
      });
      setHistory(answer.body);
    });
  };

  const restore = (version: number) => {
    if (!m) return;
    void run(async () => {
      const answer = await call<RestoreAnswer>('/api/ac/memory/restore', {
        method: 'POST',
        body: { agent_key: agentKey(), memory_key: m.memory_key, version },
      });
      setHistory(null);
      props.onSaved(
        answer.body.memory,
        `Restored version ${version} of “${m.memory_key}” as version ${answer.body.memory.version} (1 ¢).`,
      );
    });
  };

  const reload = () => {
    if (!m) return;
    void run(async () => {
      const current = await findMemory(m.memory_key);
      if (!current) {
        props.onDeleted(m.memory_key);
        return;
      }
      props.onSaved(current, `Loaded version ${current.version} of “${m.memory_key}” (1 ¢).`);
    });
  };

  return (
    <section class="card detail" aria-labelledby="detail-title">
      <div class="detail-head">
        <h2 id="detail-title" ref={heading} tabIndex={-1}>
          {m ? m.memory_key : 'New memory'}
        </h2>
        <button type="button" class="quiet" onClick={props.onClose}>
          Close
        </button>
      </div>
      {m ? (
        <dl class="items compact">
          <Item term="Type">{m.memory_type}</Item>
          <Item term="Version">{m.version}</Item>
          <Item term="Created">
            <Time iso={m.created_at} />
          </Item>
          <Item term="Updated">
            <Time iso={m.updated_at} />
          </Item>
          <Item term="Expires">{m.expires_at ? <Time iso={m.expires_at} /> : 'never'}</Item>
        </dl>
      ) : null}
      <form class="stack" onSubmit={save} aria-label={m ? `Edit ${m.memory_key}` : 'New memory'}>
        {m ? null : (
          <div class="field">
            <label for="memory-key">Key</label>
            <input
              id="memory-key"
              type="text"
              value={key}
              spellcheck={false}
              onInput={(e) => setKey(e.currentTarget.value)}
            />
          </div>
        )}
        <div class="field">
          <label for="memory-value">Value</label>
          <textarea
            id="memory-value"
            rows={6}
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="memory-type">Type</label>
          <select
            id="memory-type"
            value={type}
            onChange={(e) => setType(e.currentTarget.value as MemoryType)}
          >
            {MEMORY_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="memory-metadata">Metadata (JSON object)</label>
          <textarea
            id="memory-metadata"
            class="mono"
            rows={3}
            spellcheck={false}
            value={metadata}
            onInput={(e) => setMetadata(e.currentTarget.value)}
          />
        </div>
        <ErrorMessage error={error} />
        {conflict ? (
          <p>
            <button type="button" onClick={reload} disabled={busy}>
              Load the current version (1 ¢)
            </button>
          </p>
        ) : null}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {m ? 'Save' : 'Store'}
          </button>
          {m ? (
            <>
              <button type="button" onClick={loadHistory} disabled={busy}>
                History
              </button>
              <button type="button" class="danger" onClick={() => setConfirmDelete(true)} disabled={busy}>
                Delete…
              </button>
            </>
          ) : null}
        </div>
        <CostNote>
          {m
            ? `Save: 1 ¢ (only if version ${m.version} is still the current one). History: 1 ¢. Delete: free.`
            : 'Store: 1 ¢. A key that exists already is not overwritten.'}
        </CostNote>
      </form>
      {history ? <History history={history} busy={busy} onRestore={restore} /> : null}
      <ConfirmDialog
        open={confirmDelete}
        title="Delete this memory?"
        confirmLabel="Delete"
        danger
        onConfirm={remove}
        onCancel={() => setConfirmDelete(false)}
      >
        <p>
          “{m?.memory_key}” is deleted now. Its history is kept for a while, so it can still be restored from
          there.
        </p>
      </ConfirmDialog>
    </section>
  );
}

function History(props: { history: HistoryAnswer; busy: boolean; onRestore: (version: number) => void }) {
  const { history } = props;
  return (
    <section class="history" aria-labelledby="history-title">
      <h3 id="history-title">History</h3>
      <p class="hint">
        Newest first; the current version is {history.current_version ?? 'none (deleted)'}. Restoring makes a
        version the newest one again (1 ¢).
      </p>
      <ol class="versions">
        {history.versions.map((v) => (
          <li key={v.version}>
            <div class="memory-head">
              <strong>Version {v.version}</strong>
              <span class="hint">
                <Time iso={v.stored_at} />
              </span>
              {v.version === history.current_version ? <span class="badge">current</span> : null}
              {v.deleted ? <span class="badge badge-muted">deleted</span> : null}
            </div>
            {v.deleted ? null : (
              <>
                <p class="memory-preview">{v.memory_value}</p>
                {v.version !== history.current_version ? (
                  <button type="button" disabled={props.busy} onClick={() => props.onRestore(v.version)}>
                    Restore version {v.version}
                  </button>
                ) : null}
              </>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
