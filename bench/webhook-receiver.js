// The webhook receiver of the webhooks benchmark: node:http on the loopback interface, in a process
// of its own, started by the runner with PORT set. It answers like a well-behaved endpoint and
// keeps count; the runner reads the counts over HTTP.
//
//   POST /hook/<name>   200 "ok" once the body has arrived; counts it per <name>, and keeps the
//                       arrival time of each event id (the `webhook-id` header) for the latency
//   POST /dead/<name>   never answers (a dead endpoint that accepted the connection); counted
//   GET  /stats         {"received": {<name>: count}, "dead": {<name>: count}, "connections": n}
//   POST /arrivals      [[event id, arrival ms, name], ...] of every /hook request since the last call
//   POST /reset         forgets everything; held /dead requests are cut off
//   GET  /healthz       200, for the runner's readiness check
//
// Arrival times are wall-clock milliseconds with sub-millisecond precision
// (performance.timeOrigin + performance.now()), comparable with the runner's commit times.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const port = Number(process.env.PORT ?? '0');
/** Arrivals kept between two reads at the most; beyond it new ones are dropped (and counted). */
const ARRIVALS_MAX = 2_000_000;

let received = new Map();
let dead = new Map();
let arrivals = [];
let arrivalsDropped = 0;
let connections = 0;
const held = new Set();

function count(map, name) {
  map.set(name, (map.get(name) ?? 0) + 1);
}

const server = http.createServer((request, response) => {
  const url = request.url ?? '/';
  if (request.method === 'POST' && url.startsWith('/hook/')) {
    // The body is read in full, as a receiver that verifies the signature would.
    request.on('data', () => undefined);
    request.on('end', () => {
      const arrivedMs = performance.timeOrigin + performance.now();
      const name = url.slice('/hook/'.length);
      count(received, name);
      const eventId = request.headers['webhook-id'];
      if (typeof eventId === 'string') {
        if (arrivals.length < ARRIVALS_MAX) arrivals.push([eventId, arrivedMs, name]);
        else arrivalsDropped += 1;
      }
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
    });
    return;
  }
  if (request.method === 'POST' && url.startsWith('/dead/')) {
    count(dead, url.slice('/dead/'.length));
    held.add(response);
    response.on('close', () => held.delete(response));
    request.on('data', () => undefined);
    return;
  }
  if (request.method === 'GET' && url === '/stats') {
    reply(response, {
      received: Object.fromEntries(received),
      dead: Object.fromEntries(dead),
      connections,
      arrivals_dropped: arrivalsDropped,
    });
    return;
  }
  if (request.method === 'POST' && url === '/arrivals') {
    const taken = arrivals;
    arrivals = [];
    reply(response, taken);
    return;
  }
  if (request.method === 'POST' && url === '/reset') {
    received = new Map();
    dead = new Map();
    arrivals = [];
    arrivalsDropped = 0;
    connections = 0;
    for (const response of held) response.destroy();
    held.clear();
    reply(response, { reset: true });
    return;
  }
  if (request.method === 'GET' && url === '/healthz') {
    reply(response, { status: 'ok' });
    return;
  }
  response.writeHead(404).end();
});
server.on('connection', () => {
  connections += 1;
});
// Connections stay open as long as the worker wants them (its pool decides).
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;
server.requestTimeout = 0;
await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));

function reply(response, value) {
  const body = JSON.stringify(value);
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

function stop() {
  for (const response of held) response.destroy();
  server.closeAllConnections();
  server.close(() => process.exit(0));
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
