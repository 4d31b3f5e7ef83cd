import { randomBytes } from 'node:crypto';

/** A new Idempotency-Key for every request when `keyed`, else the headers as they are. */
function keyedHeaders(keyed) {
  const runId = randomBytes(4).toString('hex');
  let counter = 0;
  return (headers) => (keyed ? { ...headers, 'idempotency-key': `bench-${runId}-${(counter += 1)}` } : headers);
}

/** autocannon's request options for credits of 1 to wallets picked at random, one per request; `keyed`: each with a new key. */
export function spreadCreditRequests(wallets, { keyed = false } = {}) {
  return spreadRequests(wallets, 'credits', { keyed });
}

/**
 * autocannon's request options for `POST /v1/wallets/{id}/{route}` (`credits`, `debits`, `holds`)
 * of `{"amount":1}` to wallets picked at random, one per request; `keyed`: each with a new key.
 */
export function spreadRequests(wallets, route, { keyed = false } = {}) {
  const withKey = keyedHeaders(keyed);
  return {
    method: 'POST',
    requests: [
      {
        setupRequest(request) {
          const walletId = wallets[Math.floor(Math.random() * wallets.length)];
          return { ...request, headers: withKey(request.headers), path: `/v1/wallets/${walletId}/${route}`, body: '{"amount":1}' };
        },
      },
    ],
  };
}

/** `POST /v1/wallets/batch` of `size` credits of 1 over the first `walletCount` wallets, each request with a new key. */
export function batchCreditRequests(wallets, { size, walletCount }) {
  const withKey = keyedHeaders(true);
  const body = JSON.stringify({
    operations: Array.from({ length: size }, (_, index) => ({ type: 'credit', wallet_id: wallets[index % walletCount], amount: 1 })),
  });
  return {
    method: 'POST',
    requests: [
      {
        setupRequest(request) {
          return { ...request, headers: withKey(request.headers), path: '/v1/wallets/batch', body };
        },
      },
    ],
  };
}
