/**
 * A TCP relay on loopback to a target (the test PostgreSQL): every connection to it is piped to a fresh
 * connection to the target. It can be cut (a network partition: listener closed, every connection reset) and
 * healed on the same port, and it tells `onClientData` of each chunk a client sends. It runs in the test's
 * process, so what a client sends in one turn of its event loop arrives as one chunk.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
    private readonly onClientData: () => void,
  ) {}

  /** A relay to `target` on a free port (`port` to choose it). */
  static async to(
    target: { host: string; port: number },
    options: { port?: number; onClientData?: () => void } = {},
  ): Promise<TcpRelay> {
    const relay = new TcpRelay(
      options.port ?? (await closedPort()),
      target,
      options.onClientData ?? (() => {}),
    );
    await relay.heal();
    return relay;
  }

  /** Listens (again) on the relay's port. */
  async heal(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      client.on('data', this.onClientData);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          this.sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  /** Closes the listener and resets every connection through it. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

/** A loopback port that nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
