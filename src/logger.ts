/**
 * The service logger: pino on stderr (stdout carries the MCP protocol over stdio), JSON lines in production
 * and readable lines in a terminal (AC_LOG_FORMAT, `auto` by default: readable when stderr is a TTY).
 * Keys are never logged: headers are not logged at all, the request log omits query strings, and the
 * fields that could hold a key or a memory value are redacted should anything ever log them.
 * Writes are synchronous, in both formats (an asynchronous buffer grew by hundreds of megabytes under load
 * in the benchmark), but batched: the lines logged during one turn of the event loop are written to stderr
 * together, by one write when that turn ends (setImmediate) and at exit. Under load that is one write for
 * dozens of request lines instead of one each (a write per line was 7% of a request's CPU); an idle service
 * writes each line at once. A SIGKILL loses at most the lines of the turn it interrupts. The readable
 * format is pino-pretty's formatter called in-process on each line (no worker thread, no stream pipeline).
 */
import pino, { type DestinationStream } from 'pino';
import { isColorSupported, prettyFactory } from 'pino-pretty';

export type Logger = pino.Logger;
export type LogFormat = 'auto' | 'json' | 'pretty';

/** Fields that would hold a secret or a memory value, wherever a log call might put them. */
const REDACT = [
  'key',
  'agent_key',
  'apiKey',
  'authorization',
  'memory_value',
  'headers.authorization',
  'headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
];

export interface LoggerOptions {
  format?: LogFormat;
  /** Where lines go; stderr (fd 2) by default. */
  destination?: DestinationStream;
  /** Whether the destination is a terminal, for `auto` (default: whether stderr is a TTY). */
  isTty?: boolean;
}

function prettyDestination(out: DestinationStream, colorize: boolean): DestinationStream {
  const format = prettyFactory({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
  return { write: (line: string) => out.write(format(line)) };
}

interface BatchedStderr extends DestinationStream {
  /** Writes the lines held so far (pino's `logger.flush(cb)` calls it with a callback). */
  flush(cb?: (err?: Error) => void): void;
}

let stderrBatch: BatchedStderr | undefined;

/** The process's one batched stderr destination (every logger in the process shares it, as they share fd 2). */
function batchedStderr(): BatchedStderr {
  if (stderrBatch) return stderrBatch;
  const out = pino.destination({ fd: 2, sync: true });
  let pending = '';
  let scheduled = false;
  const flush = (cb?: (err?: Error) => void) => {
    scheduled = false;
    if (pending !== '') {
      const text = pending;
      pending = '';
      out.write(text);
    }
    cb?.();
  };
  process.once('exit', () => flush());
  stderrBatch = {
    write(line: string) {
      pending += line;
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => flush());
      }
    },
    flush,
  };
  return stderrBatch;
}

export function createLogger(level: string, options: LoggerOptions = {}): Logger {
  const format = options.format ?? 'json';
  const out = options.destination ?? batchedStderr();
  const tty = options.isTty ?? process.stderr.isTTY === true;
  const pretty = format === 'pretty' || (format === 'auto' && tty);
  return pino(
    { level, base: { service: 'agent-context' }, redact: { paths: REDACT, censor: '[redacted]' } },
    pretty ? prettyDestination(out, tty && isColorSupported) : out,
  );
}
