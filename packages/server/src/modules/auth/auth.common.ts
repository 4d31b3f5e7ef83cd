/**
 * What the auth service's flows share (auth.service.ts and auth.email-flows.ts): the audit record of
 * an action on a user, the cap on an address as an audit entry shows it, and the refusal of a
 * request past a rate limit.
 */
import type { RateLimiter, RateLimitRule } from '../../lib/rate-limit.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditRecord } from '../audit/audit.service.js';

/** An address tried at log in or forgot, as the audit entry keeps it: at most the longest valid address. */
export const EMAIL_SHOWN_LENGTH_MAX = 254;

export function userRecord(projectId: string, userId: string | null, action: AuditRecord['action']): AuditRecord {
  return { projectId, action, resource: { type: 'user', id: userId } };
}

/** Takes one request from `bucket`; past the rule, 429 `rate_limited` with `Retry-After`. */
export async function rateLimited(rateLimiter: RateLimiter, bucket: string, rule: RateLimitRule): Promise<void> {
  const decision = await rateLimiter.consume(bucket, rule);
  if (!decision.allowed) {
    throw new ApiError('rate_limited', `Too many requests; retry in ${decision.retryAfterSeconds} s.`, {
      headers: { 'Retry-After': String(decision.retryAfterSeconds) },
    });
  }
}
