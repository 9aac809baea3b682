/**
 * The framework's ceiling: a bare Express 5 app with one JSON POST and one GET route and no work behind
 * them, on the paths of memory_store and memory_retrieve, so that the ceilings can be driven with exactly the
 * scenarios' requests. Run as a child process (start-ceilings.ts); prints its URL on
 * stderr.
 *
 * As is, it is the stock app the issue's ratios compare with (Node's own message classes, as `app.listen`
 * gives it). With BARE_APP_PROTOTYPES=on,
 * its server makes its messages with the app's prototypes, as the service's server does
 * (src/http/express-messages.ts): the second ceiling, which shows what the service costs beyond the same
 * Express without its per-request prototype change.
 */
import { createServer } from 'node:http';
import express from 'express';
import { expressMessages } from '../../src/http/express-messages.js';
import { listenOnLoopback } from './listen.js';

const app = express();
app.use(express.json());
app.post('/api/ac/memory', (req, res) => {
  res.json({ success: true, received: typeof req.body === 'object' && req.body !== null });
});
app.get('/api/ac/memory', (req, res) => {
  res.json({ success: true, key: req.query.memory_key });
});

const server =
  process.env.BARE_APP_PROTOTYPES === 'on'
    ? createServer({ ...expressMessages(app) }, app)
    : createServer(app);
listenOnLoopback(server, 'bare express');
