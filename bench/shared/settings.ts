/** The benchmarks' numeric settings, read from the environment (BENCH_SECONDS…): unset or empty, the default. */

export function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min)
    throw new Error(`${name} must be a number ≥ ${min}, got "${raw}".`);
  return value;
}

export function envInteger(name: string, fallback: number, min: number): number {
  const value = envNumber(name, fallback, min);
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, got "${process.env[name]}".`);
  return value;
}
