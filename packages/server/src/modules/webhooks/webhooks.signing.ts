import { createHmac, randomBytes } from 'node:crypto';

/**
 * Webhook secrets and signatures (docs/api.md section 6).
 *
 * Every attempt is signed when it is sent, with the current Unix time `t`, twice over:
 * - `x-service-signature: t=<t>,v1=<hex>`, the Stripe scheme: lower-case hex HMAC-SHA256 of
 *   `<t>.<body>` keyed with the whole secret string as UTF-8;
 * - `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`, the Standard Webhooks
 *   scheme: base64 HMAC-SHA256 of `<event id>.<t>.<body>` keyed with the base64-decoded part of the
 *   secret after `whsec_`.
 * During a rotation both live secrets sign: one `v1=` each in the first header, one space-separated
 * `v1,…` entry each in the second, the newest secret first.
 */

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** `whsec_` and the base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export interface SignatureInput {
  readonly eventId: string;
  /** The exact bytes sent as the body. */
  readonly body: string;
  readonly timestampSeconds: number;
  /** The live secrets, newest first; at least one. */
  readonly secrets: readonly string[];
}

export function signatureHeaders(input: SignatureInput): Record<string, string> {
  const t = String(input.timestampSeconds);
  const stripe = input.secrets.map((secret) => `v1=${createHmac('sha256', secret).update(`${t}.${input.body}`, 'utf8').digest('hex')}`);
  const standard = input.secrets.map(
    (secret) =>
      `v1,${createHmac('sha256', standardWebhooksKey(secret)).update(`${input.eventId}.${t}.${input.body}`, 'utf8').digest('base64')}`,
  );
  return {
    'x-service-signature': [`t=${t}`, ...stripe].join(','),
    'webhook-id': input.eventId,
    'webhook-timestamp': t,
    'webhook-signature': standard.join(' '),
  };
}

/** The Standard Webhooks key: the bytes the base64 after `whsec_` encodes. */
function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64');
}
