/**
 * The framework's ceiling: a bare Express 5 app with one JSON POST and one GET route and no work behind
 * them, on the paths of memory_store and memory_retrieve, so that the ceilings can be driven with exactly the
 * scenarios' requests. Run as a child process (`node --import tsx bench/bare-express.ts`); prints its URL on
 * stderr.
 */
import express from 'express';

const app = express();
app.use(express.json());
app.post('/api/ac/memory', (req, res) => {
  res.json({ success: true, received: typeof req.body === 'object' && req.body !== null });
});
app.get('/api/ac/memory', (req, res) => {
  res.json({ success: true, key: req.query.memory_key });
});

const server = app.listen(0, '127.0.0.1', (err?: Error) => {
  if (err) throw err;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stderr.write(`bare express listening on http://127.0.0.1:${port}\n`);
});

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
