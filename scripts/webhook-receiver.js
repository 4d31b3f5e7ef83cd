// A webhook receiver for trying the service on one machine (the README's tour): listens on
// http://127.0.0.1:PORT (default 4000), verifies each delivery's `x-service-signature` with the
// secret in WEBHOOK_SECRET when set, prints one line per delivery, and answers 204.
// The service must run with WEBHOOK_ALLOW_PRIVATE=1 to deliver to a loopback address.
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? process.env.PORT ?? 4000);
const secret = process.env.WEBHOOK_SECRET;

/** Whether `header` (`t=<unix>,v1=<hex>[,v1=<hex>]`) signs `body` with `secret` (docs/api.md section 6). */
function signatureValid(header, body) {
  const parts = String(header ?? '').split(',');
  const time = parts.find((part) => part.startsWith('t='))?.slice(2);
  if (time === undefined) return false;
  const expected = createHmac('sha256', secret).update(`${time}.${body}`).digest();
  return parts
    .filter((part) => part.startsWith('v1='))
    .some((part) => {
      const given = Buffer.from(part.slice(3), 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let type = '?';
    try {
      type = JSON.parse(body).type;
    } catch {
      // not JSON: printed as "?"
    }
    const verdict =
      secret === undefined
        ? 'signature not checked'
        : signatureValid(request.headers['x-service-signature'], body)
          ? 'signature valid'
          : 'SIGNATURE INVALID';
    process.stdout.write(`webhook ${request.headers['webhook-id'] ?? '?'} ${type}: ${verdict}\n`);
    response.statusCode = 204;
    response.end();
  });
}).listen(port, '127.0.0.1', () => process.stdout.write(`receiving webhooks on http://127.0.0.1:${port}/\n`));
