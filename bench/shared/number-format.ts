/** How the benchmarks print numbers: whole numbers with thousands separators, milliseconds by their size. */

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatNumber(value: number): string {
  return Number.isFinite(value) ? int.format(value) : '—';
}

export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return int.format(value);
}
