/** Small pieces the pages share: headings, messages, times, tables, pagers, a confirmation dialog. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api';
import { dateTime } from './format';

/** The page's h1; takes the focus when the page is opened from the navigation. */
export function PageHeading({ title, focus, id }: { title: string; focus: boolean; id?: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (focus) ref.current?.focus();
  }, [focus]);
  return (
    <h1 ref={ref} tabIndex={-1} id={id}>
      {title}
    </h1>
  );
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>—</span>;
  return (
    <time dateTime={iso} title={iso}>
      {dateTime(iso)}
    </time>
  );
}

/** An error, announced when it appears. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <div class="message message-error" role="alert">
      <strong>Error: </strong>
      {errorText(error)}
    </div>
  );
}

/** A polite announcement of what just happened (saved, deleted, …). */
export function StatusMessage({ text }: { text: string | null }) {
  return (
    <div class="message-slot" role="status">
      {text ? <div class="message message-ok">{text}</div> : null}
    </div>
  );
}

/** A line saying what the buttons nearby cost. */
export function CostNote({ children }: { children: ComponentChildren }) {
  return <p class="cost-note">{children}</p>;
}

/** A table that scrolls sideways on a narrow screen, reachable by keyboard. */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to be scrolled by keyboard
    <section class="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}

export function Pager(props: {
  label: string;
  hasPrevious: boolean;
  hasNext: boolean;
  busy?: boolean;
  onPrevious: () => void;
  onNext: () => void;
  note?: string;
}) {
  return (
    <nav class="pager" aria-label={props.label}>
      <button type="button" disabled={!props.hasPrevious || props.busy} onClick={props.onPrevious}>
        ← Previous
      </button>
      {props.note ? <span class="pager-note">{props.note}</span> : null}
      <button type="button" disabled={!props.hasNext || props.busy} onClick={props.onNext}>
        Next →
      </button>
    </nav>
  );
}

/**
 * Pages of a cursor-paged list: the cursor of each page seen so far. The next page's cursor is the one the shown
 * page answered with, passed to `forward`: so "Next" is enabled from the same render as the rows it follows.
 */
export function useCursorPages() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const index = cursors.length - 1;
  return {
    cursor: cursors[index],
    page: index + 1,
    hasPrevious: index > 0,
    first: () => setCursors([undefined]),
    forward: (next: string | null | undefined) => {
      if (next) setCursors([...cursors, next]);
    },
    back: () => {
      if (index > 0) setCursors(cursors.slice(0, -1));
    },
  };
}

/**
 * A sign-in form's state (the API key's, the admin token's): the pasted credential, trimmed; `check` tries it
 * (and keeps it when it works); a blank one is refused with `missing`; an error is shown, as `explain` words it.
 */
export function useCredentialForm(
  check: (candidate: string) => Promise<void>,
  missing: string,
  explain: (err: unknown) => unknown = (err) => err,
) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = value.trim();
    if (!candidate) {
      setError(new Error(missing));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await check(candidate);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  return { value, setValue, error, busy, submit };
}

/**
 * Loads something when the inputs change; `reload` loads it again. `loading` is true from the render in which the
 * inputs change (not only once the effect has run), so a pager is never clickable over the previous page's data.
 */
export function useLoad<T>(load: () => Promise<T>, inputs: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  const keys = [...inputs, round];
  const started = useRef<unknown[] | null>(null);
  const stale = started.current === null || keys.some((k, i) => !Object.is(k, started.current?.[i]));
  useEffect(() => {
    let live = true;
    started.current = keys;
    setLoading(true);
    load().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (!live) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, keys);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data, error, loading: loading || stale, reload, setData };
}

/** A modal confirmation (the browser's own <dialog>: it keeps the focus inside and closes on Escape). */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby="confirm-title"
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id="confirm-title">{props.title}</h2>
      <div class="dialog-body">{props.children}</div>
      <div class="actions">
        <button type="button" onClick={props.onCancel} autofocus>
          Cancel
        </button>
        <button type="button" class={props.danger ? 'danger' : 'primary'} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A label and a value, in a definition list. */
export function Item({ term, children }: { term: string; children: ComponentChildren }) {
  return (
    <div class="item">
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** Text with the API's `**match**` marks shown as highlighted words. */
export function Marked({ text }: { text: string }) {
  const parts = text.split(/\*\*(.+?)\*\*/g);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part))}</>;
}
