import { type ApiCaller, bearer } from '../auth/auth.testing.js';
import type { Clock } from '../../lib/clock.js';
import { timeStep, totpCode } from './totp.js';

/** Helpers for the second-factor tests: enrolment through the API and codes at the test clock's time. */

export interface EnrolledTotp {
  readonly secret: string;
  readonly recoveryCodes: string[];
}

/** The authenticator's code at the clock's now, or `offsetSteps` steps away. */
export function codeAt(secret: string, clock: Clock, offsetSteps = 0): string {
  return totpCode(secret, timeStep(clock.now()) + offsetSteps);
}

/** Enrols and confirms an authenticator for the session's user; the clock then moves to the next step. */
export async function enrolTotp(
  call: ApiCaller,
  sessionToken: string,
  clock: Clock & { advance(ms: number): void },
): Promise<EnrolledTotp> {
  const enrolled = await call({ method: 'POST', url: '/v1/users/me/mfa/totp', headers: bearer(sessionToken) });
  if (enrolled.statusCode !== 201) throw new Error(`enrolment failed: ${enrolled.statusCode} ${enrolled.body}`);
  const { secret } = enrolled.json<{ secret: string }>();
  const confirmed = await call({
    method: 'POST',
    url: '/v1/users/me/mfa/totp/verify',
    headers: bearer(sessionToken),
    payload: { code: codeAt(secret, clock) },
  });
  if (confirmed.statusCode !== 200) throw new Error(`confirmation failed: ${confirmed.statusCode} ${confirmed.body}`);
  // The confirming code's step is spent: the next code the test sends is the next step's.
  clock.advance(30_000);
  return { secret, recoveryCodes: confirmed.json<{ recovery_codes: string[] }>().recovery_codes };
}

/** Logs in with a password and answers the response's body (a session or an MFA challenge). */
export async function logIn(call: ApiCaller, secretKey: string, input: { email: string; password: string }, query = '') {
  return call({
    method: 'POST',
    url: `/v1/auth/login${query}`,
    headers: { 'x-api-key': secretKey },
    payload: { email: input.email, password: input.password },
  });
}
