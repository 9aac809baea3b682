/** How the console writes amounts, times and ages. */

const integer = new Intl.NumberFormat('en-US');

/** `45 ¢`, `1,250 ¢`. */
export function cents(value: number): string {
  return `${integer.format(value)} ¢`;
}

/** A ledger amount with its sign: `+50 ¢`, `−2 ¢`, `0 ¢`. */
export function signedCents(value: number): string {
  if (value > 0) return `+${cents(value)}`;
  if (value < 0) return `−${cents(-value)}`;
  return cents(0);
}

export function percent(rate: number | null | undefined): string {
  if (rate === null || rate === undefined) return '—';
  return `${Math.round(rate * 1000) / 10} %`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** `2026-11-21 12:00` in the browser's time zone. */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** `42 s`, `5 min`, `3 h 10 min`, `2 d`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  return `${Math.floor(h / 24)} d`;
}

/** `5 min ago` for an instant in the past. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '—';
  return `${duration((now - t) / 1000)} ago`;
}

/** `in 7 h` for an instant in the future. */
export function fromNow(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  return `in ${duration((t - now) / 1000)}`;
}

/** Ledger operation names as words: `memory_store` → `memory store`. */
export function operationName(name: string): string {
  return name.replace(/_/g, ' ');
}
