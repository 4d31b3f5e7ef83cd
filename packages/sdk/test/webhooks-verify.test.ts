import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignatureVerificationError, verifyWebhook, type WebhookEvent } from '../src/index.js';
import { PASSWORD, type Received, startStub, uniqueEmail, useSdkService } from './harness.js';

/** The `data` fields of each event type as the SDK's types declare them (webhook-events.ts). */
const DATA_FIELDS: Partial<Record<WebhookEvent['type'], string[]>> = {
  'wallet.credit.added': ['amount', 'balance', 'description', 'transaction_id', 'wallet_id'],
  'wallet.credit.deducted': ['amount', 'balance', 'description', 'transaction_id', 'wallet_id'],
  'wallet.transfer.sent': ['amount', 'from', 'status', 'to', 'transfer_id'],
  'wallet.transfer.received': ['amount', 'from', 'status', 'to', 'transfer_id'],
  'wallet.balance.low': ['balance', 'currency', 'threshold', 'wallet_id'],
  'user.created': ['email', 'user_id'],
  'session.created': ['session_id', 'user_id'],
  'webhook.test': ['endpoint_id'],
};

/** The Standard Webhooks headers alone, as a receiver that reads only those would see them. */
function withoutServiceSignature(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'x-service-signature'));
}

describe('webhooks.verify with deliveries from the real delivery worker', () => {
  const ctx = useSdkService({ WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '0,1' });
  let receiver: Awaited<ReturnType<typeof startStub>>;
  beforeAll(async () => {
    receiver = await startStub((_request, response) => response.writeHead(200).end('ok'));
    ctx().service.webhooks.worker.start();
  });
  afterAll(() => receiver.close());

  async function deliveriesTo(path: string, count: number): Promise<Received[]> {
    for (let waited = 0; waited < 15_000; waited += 50) {
      const received = receiver.received.filter((request) => request.url === path);
      if (received.length >= count) return received;
      await sleep(50);
    }
    throw new Error(`expected ${count} deliveries to ${path}, got ${receiver.received.filter((request) => request.url === path).length}`);
  }

  let captured: { deliveries: Received[]; secret: string };
  beforeAll(async () => {
    const svc = ctx().client();
    const endpoint = await svc.webhooks.create({ url: `${receiver.url}/all`, events: ['*'], description: 'SDK test' });
    const { user } = await svc.auth.signUp({ email: uniqueEmail(), password: PASSWORD, name: 'Hook' });
    const from = await svc.wallets.create({ user_id: user.id, currency: 'USD', low_balance_threshold: 50 });
    const to = await svc.wallets.create({ user_id: user.id, currency: 'USD' });
    await svc.wallets.addCredits(from.id, { amount: 100, description: 'Top-up' });
    await svc.wallets.deductCredits(from.id, { amount: 30 });
    await svc.wallets.transfer({ from_wallet_id: from.id, to_wallet_id: to.id, amount: 25 });
    await svc.webhooks.test(endpoint.id);
    // user.created, session.created, credit, debit, transfer sent and received, balance low, webhook.test
    captured = { deliveries: await deliveriesTo('/all', 8), secret: endpoint.secret };
  });

  it('accepts every delivery and returns its event, typed as the service sends it', async () => {
    const types = new Set<string>();
    for (const delivery of captured.deliveries) {
      const event = await verifyWebhook(delivery.body, delivery.headers, captured.secret);
      expect(event).toEqual(JSON.parse(delivery.body));
      expect(event.id).toBe(delivery.headers['webhook-id']);
      types.add(event.type);
      const fields = DATA_FIELDS[event.type];
      if (fields !== undefined) expect(Object.keys(event.data).sort()).toEqual(fields);
      if (event.type === 'wallet.credit.added') expect(event.data.amount).toBe(100);
      if (event.type === 'wallet.transfer.sent') expect(event.data.status).toBe('completed');
    }
    expect([...types].sort()).toEqual(
      [
        'session.created',
        'user.created',
        'wallet.balance.low',
        'wallet.credit.added',
        'wallet.credit.deducted',
        'wallet.transfer.received',
        'wallet.transfer.sent',
        'webhook.test',
      ].sort(),
    );
  });

  it('accepts the x-service-signature value alone, a Fetch Headers object, bytes, and the Standard Webhooks headers alone', async () => {
    const delivery = captured.deliveries[0]!;
    const header = String(delivery.headers['x-service-signature']);
    const expected = JSON.parse(delivery.body) as WebhookEvent;
    expect(await verifyWebhook(delivery.body, header, captured.secret)).toEqual(expected);
    expect(await ctx().client().webhooks.verify(new TextEncoder().encode(delivery.body), header, captured.secret)).toEqual(expected);
    const fetchHeaders = new Headers(Object.entries(delivery.headers).map(([name, value]): [string, string] => [name, String(value)]));
    expect(await verifyWebhook(delivery.body, fetchHeaders, captured.secret)).toEqual(expected);
    const standardOnly = withoutServiceSignature(delivery.headers);
    expect(await verifyWebhook(delivery.body, standardOnly, captured.secret)).toEqual(expected);
  });

  it('refuses a tampered body, a wrong secret, a stale or future timestamp, and missing or malformed headers', async () => {
    const delivery = captured.deliveries.find((item) => item.body.includes('wallet.credit.added'))!;
    const standardOnly = withoutServiceSignature(delivery.headers);
    const refusal = async (promise: Promise<unknown>) => {
      const error = await promise.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SignatureVerificationError);
      return (error as SignatureVerificationError).reason;
    };
    for (const headers of [delivery.headers, standardOnly]) {
      expect(await refusal(verifyWebhook(delivery.body.replace('"amount":100', '"amount":900'), headers, captured.secret))).toBe(
        'signature_mismatch',
      );
      expect(await refusal(verifyWebhook(`${delivery.body} `, headers, captured.secret))).toBe('signature_mismatch');
      const otherSecret = `whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`;
      expect(await refusal(verifyWebhook(delivery.body, headers, otherSecret))).toBe('signature_mismatch');
      const sent = Number(delivery.headers['webhook-timestamp']) * 1000;
      expect(await refusal(verifyWebhook(delivery.body, headers, captured.secret, { now: new Date(sent + 301_000) }))).toBe(
        'timestamp_outside_tolerance',
      );
      expect(await refusal(verifyWebhook(delivery.body, headers, captured.secret, { now: new Date(sent - 301_000) }))).toBe(
        'timestamp_outside_tolerance',
      );
      expect(await verifyWebhook(delivery.body, headers, captured.secret, { now: new Date(sent + 299_000) })).toMatchObject({
        type: 'wallet.credit.added',
      });
      expect(
        await verifyWebhook(delivery.body, headers, captured.secret, { now: new Date(sent + 3_600_000), toleranceSeconds: 7_200 }),
      ).toMatchObject({ type: 'wallet.credit.added' });
    }
    // A signature moved to another time does not match it.
    const header = String(delivery.headers['x-service-signature']);
    const moved = header.replace(/^t=(\d+)/, (_match, t: string) => `t=${Number(t) + 1}`);
    expect(await refusal(verifyWebhook(delivery.body, moved, captured.secret))).toBe('signature_mismatch');
    expect(await refusal(verifyWebhook(delivery.body, {}, captured.secret))).toBe('header_missing');
    expect(await refusal(verifyWebhook(delivery.body, 'v1=abc', captured.secret))).toBe('header_invalid');
    expect(await refusal(verifyWebhook(delivery.body, header.replace(/,v1=.*/, ''), captured.secret))).toBe('header_invalid');
    await expect(verifyWebhook(delivery.body, header, '')).rejects.toThrow(TypeError);
  });

  it('during a rotation accepts the old and the new secret: one v1 per live secret', async () => {
    const svc = ctx().client();
    const endpoint = await svc.webhooks.create({ url: `${receiver.url}/rotating`, events: ['webhook.test'] });
    const rotated = await svc.webhooks.rotateSecret(endpoint.id);
    await svc.webhooks.test(endpoint.id);
    const [delivery] = await deliveriesTo('/rotating', 1);
    const header = String(delivery!.headers['x-service-signature']);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(String(delivery!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const standardOnly = withoutServiceSignature(delivery!.headers);
    for (const secret of [endpoint.secret, rotated.secret, [`whsec_${Buffer.from('y'.repeat(32)).toString('base64')}`, rotated.secret]]) {
      expect(await verifyWebhook(delivery!.body, header, secret)).toMatchObject({
        type: 'webhook.test',
        data: { endpoint_id: endpoint.id },
      });
      expect(await verifyWebhook(delivery!.body, standardOnly, secret)).toMatchObject({ type: 'webhook.test' });
    }
  });
});
