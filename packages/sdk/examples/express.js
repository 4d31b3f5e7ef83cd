// An Express receiver for the service's webhooks (plain JavaScript: express is not a dependency of
// this repository). Run: npm install express @svc/sdk && SVC_WEBHOOK_SECRET=whsec_… node express.js
import express from 'express';
import { SignatureVerificationError, verifyWebhook } from '@svc/sdk';

const secret = process.env.SVC_WEBHOOK_SECRET ?? '';
const app = express();

// express.raw keeps the body as a Buffer: the signature covers the exact bytes sent. Mount it on
// this route only, before any express.json() that would consume the body.
app.post('/webhooks/svc', express.raw({ type: 'application/json' }), async (request, response, next) => {
  try {
    const event = await verifyWebhook(request.body, request.headers, secret);
    // Deliveries are at least once: de-duplicate by event.idempotency_key before acting.
    if (event.type === 'wallet.credit.added') console.log(`wallet ${event.data.wallet_id}: +${event.data.amount}`);
    response.status(200).json({ received: true });
  } catch (error) {
    if (error instanceof SignatureVerificationError) {
      response.status(401).json({ error: error.reason });
      return;
    }
    next(error);
  }
});

app.listen(Number(process.env.PORT ?? 3000));
