/**
 * Charts drawn as plain SVG: the spend per day (vertical bars, drawn at the width of their container so
 * that the labels keep their size on a phone) and a horizontal bar for tables.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { cents } from './format';

export interface DayBar {
  date: string;
  value: number;
  detail: string;
}

/** A round upper bound for an axis: 1, 2, 5, 10, 20, 50, … at least `max`. */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * step >= max) return m * step;
  return 10 * step;
}

function useWidth(fallback: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const measure = () => setWidth(Math.max(240, Math.floor(element.clientWidth)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

/** Bars per day; `label` names the chart for assistive technology (a table holds the figures too). */
export function DayChart({ bars, label }: { bars: DayBar[]; label: string }) {
  const { ref, width } = useWidth(640);
  const height = 220;
  const left = 48;
  const right = 8;
  const top = 12;
  const bottom = 28;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const max = niceMax(Math.max(0, ...bars.map((b) => b.value)));
  const slot = bars.length ? plotW / bars.length : plotW;
  const barW = Math.max(2, slot * 0.7);
  const every = Math.max(1, Math.ceil(bars.length / Math.max(1, Math.floor(plotW / 56))));
  const ticks = [0, max / 2, max];
  return (
    <div ref={ref} class="chart">
      <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label}>
        {ticks.filter(Number.isInteger).map((t) => {
          const y = top + plotH - (t / max) * plotH;
          return (
            <g key={t}>
              <line x1={left} x2={width - right} y1={y} y2={y} class="grid" />
              <text x={left - 6} y={y + 4} text-anchor="end" class="axis">
                {cents(t)}
              </text>
            </g>
          );
        })}
        {bars.map((bar, i) => {
          const h = (bar.value / max) * plotH;
          const x = left + i * slot + (slot - barW) / 2;
          return (
            <g key={bar.date}>
              <rect x={x} y={top + plotH - h} width={barW} height={Math.max(h, 0)} class="bar" rx={2}>
                <title>{bar.detail}</title>
              </rect>
              {bar.value > 0 && h < 2 ? (
                <rect x={x} y={top + plotH - 2} width={barW} height={2} class="bar" />
              ) : null}
              {(bars.length - 1 - i) % every === 0 ? (
                <text
                  x={x + barW / 2 + 20 > width ? width - 1 : x + barW / 2}
                  y={height - 8}
                  text-anchor={x + barW / 2 + 20 > width ? 'end' : 'middle'}
                  class="axis"
                >
                  {bar.date.slice(5)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
    </div>
  );
}

/** A horizontal bar for `value` out of `max`, decorative (the figure is written beside it). */
export function InlineBar({ value, max }: { value: number; max: number }) {
  const share = max > 0 ? Math.min(1, Math.max(0, value / max)) : 0;
  return (
    <svg class="inline-bar" width="100%" height="12" aria-hidden="true" focusable="false">
      <rect x="0" y="0" width="100%" height="12" rx="3" class="inline-bar-track" />
      <rect x="0" y="0" width={`${share * 100}%`} height="12" rx="3" class="inline-bar-fill" />
    </svg>
  );
}
