import { ApiError } from './errors.js';

/** A token bucket: `perSecond` tokens flow in, at most `burst` are held; each request takes one. */
export interface RateLimitRule {
  readonly perSecond: number;
  readonly burst: number;
}

export interface RateLimitDecision {
  readonly allowed: boolean;
  /** The bucket's size, for `RateLimit-Limit`. */
  readonly limit: number;
  /** Whole tokens left after this request, for `RateLimit-Remaining`. */
  readonly remaining: number;
  /** Seconds until the bucket is full again, for `RateLimit-Reset`. */
  readonly resetSeconds: number;
  /** When refused: seconds until one token is available, for `Retry-After`. */
  readonly retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Takes one token from `bucket` if one is there. */
  consume(bucket: string, rule: RateLimitRule): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

/** The answer to a request past its limit: 429 `rate_limited`, with `Retry-After`. */
export function rateLimitRefusal(decision: RateLimitDecision): ApiError {
  return new ApiError('rate_limited', `Too many requests; retry in ${decision.retryAfterSeconds} s.`, {
    headers: { 'Retry-After': String(decision.retryAfterSeconds) },
  });
}

/** Takes one request from `bucket`; past the rule, throws `rateLimitRefusal`. */
export async function takeOrRefuse(rateLimiter: RateLimiter, bucket: string, rule: RateLimitRule): Promise<void> {
  const decision = await rateLimiter.consume(bucket, rule);
  if (!decision.allowed) throw rateLimitRefusal(decision);
}
