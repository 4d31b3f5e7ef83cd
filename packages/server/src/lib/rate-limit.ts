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
