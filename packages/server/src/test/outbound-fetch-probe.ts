import { OutboundHttp } from '../lib/outbound-http.js';
import { outboundFetch } from '../lib/outbound-http.fetch.js';

/**
 * Run in a child process by oauth.ca.test.ts: one GET through the outbound module, as the OAuth
 * module makes it (private addresses allowed, HTTPS only, no CA of its own), so the only trust in
 * play is Node's default store and NODE_EXTRA_CA_CERTS. Prints `status <code>` or `failed <reason>`.
 */
const url = process.argv[2] ?? '';
const http = new OutboundHttp({ allowPrivate: true, allowHttp: false });
try {
  const response = await outboundFetch(http)(url);
  process.stdout.write(`status ${response.status}\n`);
} catch (error) {
  process.stdout.write(`failed ${error instanceof Error ? error.message : String(error)}\n`);
} finally {
  await http.close();
}
