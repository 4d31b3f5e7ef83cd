import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AddressClass, classifyAddress, isForbiddenHostname } from './outbound-http.addresses.js';
import { type DnsLookup, OutboundHttp } from './outbound-http.js';

const PUBLIC_V4 = '93.184.215.14';

/** A resolver that answers from a table; unknown names do not exist. Tests never ask real DNS. */
function fakeLookup(table: Record<string, readonly string[]>): DnsLookup {
  return (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) return Promise.reject(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

describe('address classifier', () => {
  const cases: [string, AddressClass][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['169.254.1.1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::127.0.0.1', 'reserved'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['169.253.255.255', 'public'],
    ['11.0.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::808:808', 'public'],
    ['2002:808:808::1', 'public'],
  ];
  it.each(cases)('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('says a host name is not an address, and refuses local and single-label names', () => {
    expect(classifyAddress('example.com')).toBeUndefined();
    expect(classifyAddress('0x7f000001')).toBeUndefined();
    for (const name of ['localhost', 'LOCALHOST.', 'api.localhost', 'printer.local', 'metadata.google.internal', 'metadata', 'intranet']) {
      expect(isForbiddenHostname(name)).toBe(true);
    }
    expect(isForbiddenHostname('hooks.example.com')).toBe(false);
  });
});

describe('OutboundHttp.checkUrl without WEBHOOK_ALLOW_PRIVATE', () => {
  const outbound = new OutboundHttp({
    allowPrivate: false,
    lookup: fakeLookup({
      'hooks.example.com': [PUBLIC_V4],
      'rebind.example.com': ['127.0.0.1'],
      'v6loop.example.com': ['::1'],
      'mixed.example.com': [PUBLIC_V4, '10.0.0.7'],
      'metadata.example.com': ['169.254.169.254'],
    }),
  });
  afterAll(() => outbound.close());

  const forbidden = [
    'https://127.0.0.1/',
    'https://127.1/',
    'https://0x7f000001/',
    'https://2130706433/',
    'https://017700000001/',
    'https://0177.0.0.1/',
    'https://0x7f.1/',
    'https://127.0.0.1.:8443/',
    'https://%31%32%37.0.0.1/',
    'https://0/',
    'https://[::1]/',
    'https://[0:0:0:0:0:0:0:1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::]/',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::ffff:169.254.169.254]/',
    'https://10.1.2.3/',
    'https://172.16.0.5/',
    'https://192.168.0.10/',
    'https://100.64.1.1/',
    'https://[fc00::1]/',
    'https://[fd00:ec2::254]/',
    'https://[fe80::1]/',
    'https://224.0.0.1/',
    'https://[ff02::1]/',
    'https://localhost/',
    'https://LOCALHOST./',
    'https://api.localhost/',
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://metadata/',
    'https://rebind.example.com/',
    'https://v6loop.example.com/',
    'https://mixed.example.com/',
    'https://metadata.example.com/',
  ];
  it.each(forbidden)('refuses %s as forbidden', async (url) => {
    const check = await outbound.checkUrl(url);
    expect(check).toMatchObject({ ok: false, reason: 'forbidden' });
  });

  const invalid = [
    'http://hooks.example.com/',
    'ftp://hooks.example.com/',
    'not a url',
    '',
    'javascript:alert(1)',
    'https://user:password@hooks.example.com/',
    `https://hooks.example.com/${'a'.repeat(2100)}`,
  ];
  it.each(invalid)('refuses %j as invalid', async (url) => {
    const check = await outbound.checkUrl(url);
    expect(check).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it('accepts a public https URL, and a name that does not resolve now (checked again when sending)', async () => {
    expect(await outbound.checkUrl('https://hooks.example.com/in?x=1')).toEqual({ ok: true, url: 'https://hooks.example.com/in?x=1' });
    expect(await outbound.checkUrl('https://not-yet.example.com/')).toMatchObject({ ok: true });
  });
});

describe('OutboundHttp.send', () => {
  let server: Server;
  let origin: string;
  let hits: string[];
  /** Resolves when the receiver sees the request to that path closed by the client. */
  const closedByClient = new Map<string, () => void>();
  /** A bare TCP listener that counts connections: a refused address must never reach it. */
  let trap: TcpServer;
  let trapPort: number;
  let trapConnections = 0;

  beforeAll(async () => {
    hits = [];
    server = createServer((request, response) => {
      hits.push(request.url ?? '');
      response.once('close', () => closedByClient.get(request.url ?? '')?.());
      if (request.url === '/redirect') {
        response.writeHead(302, { location: '/target' }).end();
      } else if (request.url === '/big') {
        response.writeHead(200).end('x'.repeat(10_000));
      } else if (request.url === '/hang') {
        // Never answers.
      } else if (request.url === '/stall') {
        // The status, headers and part of the body, then nothing more.
        response.writeHead(200, { 'content-length': '100' });
        response.write('partial');
      } else {
        response.writeHead(200, { 'retry-after': '7' }).end('fine');
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    trap = createTcpServer((socket) => {
      trapConnections += 1;
      socket.destroy();
    });
    trap.listen(0, '127.0.0.1');
    await once(trap, 'listening');
    trapPort = (trap.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    trap.close();
  });

  it('reads the status, headers and at most 4 KiB of the body', async () => {
    const outbound = new OutboundHttp({ allowPrivate: true });
    const small = await outbound.send({ method: 'POST', url: `${origin}/ok`, headers: {}, body: '{}' });
    expect(small).toMatchObject({ kind: 'response', status: 200, bodyTruncated: false });
    expect(small.kind === 'response' && small.body.toString()).toBe('fine');
    expect(small.kind === 'response' && small.headers['retry-after']).toBe('7');
    const big = await outbound.send({ method: 'POST', url: `${origin}/big`, headers: {}, body: '{}' });
    expect(big.kind === 'response' && big.body.length).toBe(4096);
    expect(big).toMatchObject({ bodyTruncated: true });
    await outbound.close();
  });

  it('does not follow redirects', async () => {
    const outbound = new OutboundHttp({ allowPrivate: true });
    hits.length = 0;
    const result = await outbound.send({ method: 'POST', url: `${origin}/redirect`, headers: {}, body: '{}' });
    expect(result).toMatchObject({ kind: 'response', status: 302 });
    expect(hits).toEqual(['/redirect']);
    await outbound.close();
  });

  /** Resolves once the receiver sees the client close its request to `path` (it gave up). */
  function clientCloses(path: string): Promise<void> {
    return new Promise((resolve) => closedByClient.set(path, resolve));
  }

  it('gives up after the timeout', async () => {
    const outbound = new OutboundHttp({ allowPrivate: true, timeoutMs: 300 });
    const closed = clientCloses('/hang');
    const result = await outbound.send({ method: 'POST', url: `${origin}/hang`, headers: {}, body: '{}' });
    expect(result).toMatchObject({ kind: 'failure', reason: 'timeout', message: 'no complete answer within 300 ms' });
    // Not before the deadline: 300 ms, less the few ms by which the event loop's cached time (that
    // timers count from) may trail performance.now(). That the deadline fires at all is the answer
    // above: without it this request would hang.
    expect(result.latencyMs).toBeGreaterThanOrEqual(250);
    // And the request was abandoned, not left open: the receiver sees the connection closed.
    await closed;
    await outbound.close();
  });

  it('keeps the status and what arrived of the body when the deadline passes during the body', async () => {
    const outbound = new OutboundHttp({ allowPrivate: true, timeoutMs: 300 });
    const closed = clientCloses('/stall');
    const result = await outbound.send({ method: 'POST', url: `${origin}/stall`, headers: {}, body: '{}' });
    expect(result).toMatchObject({ kind: 'response', status: 200, bodyTruncated: false });
    expect(result.kind === 'response' && result.body.toString()).toBe('partial');
    expect(result.latencyMs).toBeGreaterThanOrEqual(250);
    await closed;
    await outbound.close();
  });

  it('refuses, without connecting, a name that resolved to a public address at creation and to loopback now (DNS rebinding)', async () => {
    let lookups = 0;
    const rebinding: DnsLookup = () => {
      lookups += 1;
      const address = lookups === 1 ? PUBLIC_V4 : '127.0.0.1';
      return Promise.resolve([{ address, family: 4 }]);
    };
    const outbound = new OutboundHttp({ allowPrivate: false, lookup: rebinding, timeoutMs: 2000 });
    const url = `https://rebind.example.com:${trapPort}/hook`;
    expect(await outbound.checkUrl(url)).toMatchObject({ ok: true });
    const result = await outbound.send({ method: 'POST', url, headers: {}, body: '{}' });
    expect(result).toMatchObject({ kind: 'failure', reason: 'refused' });
    expect(result.kind === 'failure' && result.message).toContain('127.0.0.1');
    expect(trapConnections).toBe(0);
    await outbound.close();
  });

  it('refuses IP literals and http:// without WEBHOOK_ALLOW_PRIVATE, before connecting', async () => {
    const outbound = new OutboundHttp({ allowPrivate: false, lookup: fakeLookup({}) });
    expect(await outbound.send({ method: 'POST', url: `https://127.0.0.1:${trapPort}/`, headers: {}, body: '' })).toMatchObject({
      kind: 'failure',
      reason: 'refused',
    });
    expect(await outbound.send({ method: 'POST', url: `https://[::ffff:7f00:1]:${trapPort}/`, headers: {}, body: '' })).toMatchObject({
      kind: 'failure',
      reason: 'refused',
    });
    expect(await outbound.send({ method: 'POST', url: `http://127.0.0.1:${trapPort}/`, headers: {}, body: '' })).toMatchObject({
      kind: 'failure',
      reason: 'refused',
    });
    expect(trapConnections).toBe(0);
    await outbound.close();
  });
});
