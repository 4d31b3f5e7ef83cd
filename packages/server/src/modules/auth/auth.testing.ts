import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Service } from '../../main.js';
import type { Clock } from '../../lib/clock.js';

/**
 * Helpers for the auth, sessions, users and email tests: requests through `app.inject`, a clock
 * tests can move, and readers of the outbox tables. No test framework here, so it compiles with the
 * service.
 */

export interface TestClock extends Clock {
  set(date: Date): void;
  advance(milliseconds: number): void;
}

/** A clock that stands still until a test moves it; starts at the real now. */
export function testClock(start: Date = new Date()): TestClock {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    set: (date) => {
      current = date.getTime();
    },
    advance: (milliseconds) => {
      current += milliseconds;
    },
  };
}

export interface ApiCaller {
  (options: InjectOptions): Promise<LightMyRequestResponse>;
}

/** Test passwords: long, random-looking, and not on the breached list. */
export function strongPassword(seed = ''): string {
  return `Tq7!vexo-${seed}-plumb-${Math.random().toString(36).slice(2, 8)}`;
}

let emailCounter = 0;
export function uniqueEmail(local = 'user'): string {
  emailCounter += 1;
  return `${local}.${Date.now().toString(36)}.${emailCounter}@example.com`;
}

export interface SignedUp {
  readonly email: string;
  readonly password: string;
  readonly userId: string;
  readonly token: string;
  readonly refreshToken: string;
  readonly body: SignupBody;
}

export interface SignupBody {
  user: { id: string; email: string; email_verified: boolean; [field: string]: unknown };
  session: { id: string; expires_at: string; refresh_token: string; refresh_expires_at: string };
}

export async function signup(
  call: ApiCaller,
  secretKey: string,
  input: { email?: string; password?: string; name?: string } = {},
): Promise<SignedUp> {
  const email = input.email ?? uniqueEmail();
  const password = input.password ?? strongPassword();
  const response = await call({
    method: 'POST',
    url: '/v1/auth/signup',
    headers: { 'x-api-key': secretKey },
    payload: { email, password, name: input.name ?? 'Test User' },
  });
  if (response.statusCode !== 201) throw new Error(`sign up failed: ${response.statusCode} ${response.body}`);
  const body = response.json<SignupBody>();
  return { email, password, userId: body.user.id, token: body.session.id, refreshToken: body.session.refresh_token, body };
}

export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

/** Every event of a type, oldest first, with its data parsed. */
export async function eventsOf(service: Service, projectId: string, type: string): Promise<Array<Record<string, unknown>>> {
  const rows = await service.db.kysely
    .selectFrom('events')
    .select(['data', 'created_at'])
    .where('project_id', '=', projectId)
    .where('type', '=', type)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => JSON.parse(row.data) as Record<string, unknown>);
}

/** Runs the email outbox job once, as the scheduler would. */
export async function runEmailJob(service: Service): Promise<void> {
  const job = service.jobs.find((candidate) => candidate.name === 'email-outbox');
  if (job === undefined) throw new Error('the email outbox job is not registered');
  await job.run();
}
