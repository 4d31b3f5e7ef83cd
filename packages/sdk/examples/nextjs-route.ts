// A Next.js App Router route handler, e.g. app/api/webhooks/svc/route.ts. It runs on the Node.js
// and the Edge runtimes alike: verification uses Web Crypto.
import { SignatureVerificationError, verifyWebhook } from '@svc/sdk';

export async function POST(request: Request): Promise<Response> {
  // The raw text, never `request.json()`: re-serialised JSON would not match the signature.
  const rawBody = await request.text();
  try {
    const event = await verifyWebhook(rawBody, request.headers, process.env['SVC_WEBHOOK_SECRET'] ?? '');
    // Deliveries are at least once: de-duplicate by event.idempotency_key before acting.
    if (event.type === 'wallet.balance.low') {
      console.log(`wallet ${event.data.wallet_id} is down to ${event.data.balance} ${event.data.currency}`);
    }
    return Response.json({ received: true });
  } catch (error) {
    if (error instanceof SignatureVerificationError) return Response.json({ error: error.reason }, { status: 401 });
    throw error;
  }
}
