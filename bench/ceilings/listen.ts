/**
 * How a ceiling's app (bare-express.ts, textbook-express.ts) serves, as a child process of a benchmark: on a free
 * loopback port, printing `<name> listening on <url>` on stderr (what start-ceilings.ts waits for), and closing on
 * SIGTERM or SIGINT.
 */
import type { Server } from 'node:http';

/** Listens; on a signal closes the server, then runs `closed` (the app's own cleanup), then exits. */
export function listenOnLoopback(
  server: Server,
  name: string,
  closed: () => Promise<unknown> = async () => {},
): void {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    process.stderr.write(`${name} listening on http://127.0.0.1:${port}\n`);
  });
  const stop = () => server.close(() => closed().finally(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
