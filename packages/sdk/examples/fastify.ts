// A Fastify receiver for the service's webhooks. Run: SVC_WEBHOOK_SECRET=whsec_… node fastify.js
import { fastify } from 'fastify';
import { SignatureVerificationError, verifyWebhook } from '@svc/sdk';

const secret = process.env['SVC_WEBHOOK_SECRET'] ?? '';
const app = fastify();

await app.register(async (scope) => {
  // The signature covers the exact bytes sent, so this scope keeps JSON bodies as a Buffer
  // instead of parsing them (the rest of the app parses JSON as usual).
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  scope.post('/webhooks/svc', async (request, reply) => {
    try {
      const event = await verifyWebhook(request.body as Buffer, request.headers, secret);
      // Deliveries are at least once: de-duplicate by event.idempotency_key before acting.
      switch (event.type) {
        case 'wallet.credit.added':
          request.log.info({ wallet: event.data.wallet_id, balance: event.data.balance }, 'credits added');
          break;
        case 'session.revoked':
          request.log.info({ session: event.data.session_id, reason: event.data.reason }, 'session revoked');
          break;
        default:
          // Unknown or uninteresting types: acknowledge and ignore.
          break;
      }
      return await reply.code(200).send({ received: true });
    } catch (error) {
      if (error instanceof SignatureVerificationError) return reply.code(401).send({ error: error.reason });
      throw error;
    }
  });
});

await app.listen({ port: Number(process.env['PORT'] ?? 3000) });
