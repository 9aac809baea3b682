/** The REST calls the benchmarks make to set a server up: a JSON POST, and an agent on the unlimited plan. */

/** The AC_ADMIN_TOKEN the benchmarks start their servers with, to put agents on a plan. */
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';

/** POSTs `body` as JSON to `url` + `pathname` and answers the JSON answer; fails on a non-2xx status. */
export async function postJson(
  url: string,
  pathname: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${pathname} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * Registers `email` and puts it on the unlimited plan (the server started with AC_ADMIN_TOKEN=BENCH_ADMIN_TOKEN),
 * so that a load never runs out of credit; answers its agent key.
 */
export async function unlimitedAgent(url: string, email: string): Promise<string> {
  const { agent_key } = await postJson(url, '/api/ac/register', { email });
  await postJson(
    url,
    '/api/ac/admin/plan',
    { email, plan: 'unlimited' },
    { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` },
  );
  return agent_key as string;
}
