// The baseline: bare Fastify 5 with the logger off and one route, nothing else. Run as a child
// process by the benchmark runner with PORT set; listens on the loopback interface only.
import Fastify from 'fastify';

const port = Number(process.env.PORT ?? '0');
const app = Fastify({ logger: false });
app.get('/baseline', async () => ({ ok: true }));
await app.listen({ host: '127.0.0.1', port });

function stop() {
  void app.close().then(() => process.exit(0));
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
