import type { HTTPMethods, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { tokenIn, useTestSmtp } from '../../test/smtp.js';
import { bearer, eventsOf, runEmailJob, signup, testClock, uniqueEmail } from '../auth/auth.testing.js';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code, body: response.body }).toMatchObject({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

interface InvitationBody {
  id: string;
  status: string;
  email: string;
  role: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

describeEachDialect('organization invitations through SMTP', (dialect) => {
  const env: Record<string, string> = { INVITATION_ACCEPT_URL: 'https://app.example.com/join?from=email' };
  const smtp = useTestSmtp(env);
  const clock = testClock();
  const ctx = useTestService(dialect, { env, serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const api = (method: HTTPMethods, url: string, payload?: object, headers: Record<string, string> = ctx().auth) =>
    call({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
  const emailsTo = (address: string) => smtp().received.filter((email) => email.to.includes(address));

  /** The token of the last email sent to the address, after the outbox job ran. */
  async function lastTokenSentTo(address: string): Promise<string> {
    await runEmailJob(ctx().service);
    const email = emailsTo(address).at(-1);
    if (email === undefined) throw new Error(`no email to ${address}`);
    return tokenIn(email.text);
  }

  /** A user who signed up and verified the address by following the verification email. */
  async function verifiedUser(email = uniqueEmail('invitee')) {
    const account = await signup(call, ctx().secretKey, { email });
    const verified = await api('POST', '/v1/auth/verify-email', { token: await lastTokenSentTo(email) });
    expect(verified.json().email_verified).toBe(true);
    return account;
  }

  async function organizationWithOwner() {
    const created = await api('POST', '/v1/organizations', { name: `Team ${uniqueEmail('t').split('@')[0]!.replace(/\./g, ' ')}` });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<{ id: string }>().id;
    const owner = (await signup(call, ctx().secretKey)).userId;
    expect((await api('POST', `/v1/organizations/${id}/members`, { user_id: owner, role: 'owner' })).statusCode).toBe(201);
    return id;
  }

  const invite = async (organizationId: string, email: string, role?: string) => {
    const response = await api('POST', `/v1/organizations/${organizationId}/invitations`, {
      email,
      ...(role === undefined ? {} : { role }),
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<InvitationBody>();
  };
  const accept = (token: string, sessionToken: string) => api('POST', '/v1/invitations/accept', { token }, bearer(sessionToken));

  it('sends an email with a single-use token; the invited, verified user accepts it once; events and membership', async () => {
    const organizationId = await organizationWithOwner();
    const address = uniqueEmail('Invitee');
    const invitation = await invite(organizationId, address, 'admin');
    expect(invitation).toMatchObject({
      id: expect.stringMatching(/^inv_[0-9A-Za-z]{22}$/),
      object: 'invitation',
      organization_id: organizationId,
      email: address,
      role: 'admin',
      status: 'pending',
      expires_at: new Date(clock.now().getTime() + 7 * DAY_MS).toISOString(),
      accepted_at: null,
      revoked_at: null,
    });
    // Queued in the transaction, sent by the outbox job after it: nothing yet.
    expect(emailsTo(address)).toHaveLength(0);
    await runEmailJob(ctx().service);
    const [email] = emailsTo(address);
    expect(email!.text).toContain('Subject: You are invited to join Team');
    expect(email!.text).toContain('https://app.example.com/join?from=email&token=');
    const token = tokenIn(email!.text);
    // Only the token's hash is stored.
    const stored = await ctx()
      .service.db.kysely.selectFrom('organization_invitations')
      .select('token_hash')
      .where('id', '=', invitation.id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.token_hash).not.toContain(token);

    // The address compares without case, as sign-up does.
    const account = await verifiedUser(address.toUpperCase().replace('@EXAMPLE.COM', '@example.com'));
    const accepted = await accept(token, account.token);
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({
      object: 'organization_membership',
      organization_id: organizationId,
      user_id: account.userId,
      role: 'admin',
      organization: { id: organizationId, object: 'organization' },
    });
    expect(await eventsOf(ctx().service, ctx().projectId, 'organization.invitation.accepted')).toContainEqual({
      organization_id: organizationId,
      invitation_id: invitation.id,
      user_id: account.userId,
      email: address,
      role: 'admin',
    });
    expect(await eventsOf(ctx().service, ctx().projectId, 'organization.member.added')).toContainEqual({
      organization_id: organizationId,
      user_id: account.userId,
      role: 'admin',
    });
    const mine = await call({ method: 'GET', url: '/v1/users/me/organizations', headers: bearer(account.token) });
    expect(mine.json().data).toMatchObject([{ organization_id: organizationId, role: 'admin' }]);
    const list = await api('GET', `/v1/organizations/${organizationId}/invitations`);
    expect(list.json().data).toMatchObject([{ id: invitation.id, status: 'accepted', accepted_user_id: account.userId }]);

    // Single use.
    expectError(await accept(token, account.token), 400, 'token_invalid', 'token');
    // Accepted invitations cannot be revoked; the email job sends nothing twice.
    expectError(await api('DELETE', `/v1/organizations/${organizationId}/invitations/${invitation.id}`), 409, 'invitation_not_pending');
    await runEmailJob(ctx().service);
    expect(emailsTo(address)).toHaveLength(1);
  });

  it('two accepts of one token at once: exactly one joins, the other is refused', async () => {
    const organizationId = await organizationWithOwner();
    const address = uniqueEmail('racer');
    await invite(organizationId, address);
    const token = await lastTokenSentTo(address);
    const account = await verifiedUser(address);
    const responses = await Promise.all([accept(token, account.token), accept(token, account.token), accept(token, account.token)]);
    const outcomes = responses
      .map((response) => (response.statusCode === 200 ? 'joined' : response.json<{ error: { code: string } }>().error.code))
      .sort();
    expect(outcomes).toEqual(['joined', 'token_invalid', 'token_invalid']);
    const accepted = await eventsOf(ctx().service, ctx().projectId, 'organization.invitation.accepted');
    expect(accepted.filter((data) => data['user_id'] === account.userId)).toHaveLength(1);
  });

  it('refuses a session whose verified email is another address, or whose address is not verified (403)', async () => {
    const organizationId = await organizationWithOwner();
    const address = uniqueEmail('invited');
    await invite(organizationId, address);
    const token = await lastTokenSentTo(address);
    const stranger = await verifiedUser();
    expectError(await accept(token, stranger.token), 403, 'invitation_email_mismatch');
    const unverified = await signup(call, ctx().secretKey, { email: address });
    expectError(await accept(token, unverified.token), 403, 'invitation_email_mismatch');
    // The refusals left the invitation pending: once verified, the invited user gets in.
    const verified = await api('POST', '/v1/auth/verify-email', { token: await lastTokenSentTo(address) });
    expect(verified.statusCode).toBe(200);
    expect((await accept(token, unverified.token)).statusCode).toBe(200);
  });

  it('a re-invite of the same address replaces the old invitation: the old token is refused, the new one works', async () => {
    const organizationId = await organizationWithOwner();
    const address = uniqueEmail('twice');
    const first = await invite(organizationId, address, 'member');
    const oldToken = await lastTokenSentTo(address);
    const second = await invite(organizationId, address, 'admin');
    const newToken = await lastTokenSentTo(address);
    expect(newToken).not.toBe(oldToken);
    const list = await api('GET', `/v1/organizations/${organizationId}/invitations`);
    expect(list.json<{ data: InvitationBody[] }>().data.map((item) => [item.id, item.status])).toEqual(
      expect.arrayContaining([
        [first.id, 'replaced'],
        [second.id, 'pending'],
      ]),
    );
    const account = await verifiedUser(address);
    expectError(await accept(oldToken, account.token), 400, 'token_invalid', 'token');
    const accepted = await accept(newToken, account.token);
    expect(accepted.json()).toMatchObject({ role: 'admin' });
  });

  it('a re-invite before the first email went out sends only the new one', async () => {
    const organizationId = await organizationWithOwner();
    const address = uniqueEmail('quick');
    await invite(organizationId, address);
    await invite(organizationId, address);
    await runEmailJob(ctx().service);
    expect(emailsTo(address)).toHaveLength(1);
  });

  it('revoking makes the token refused; revoking twice is 409; unknown invitations are 404', async () => {
    const organizationId = await organizationWithOwner();
    const address = uniqueEmail('revoked');
    const invitation = await invite(organizationId, address);
    const token = await lastTokenSentTo(address);
    const url = `/v1/organizations/${organizationId}/invitations/${invitation.id}`;
    const revoked = await api('DELETE', url);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ id: invitation.id, status: 'revoked', revoked_at: clock.now().toISOString() });
    expectError(await api('DELETE', url), 409, 'invitation_not_pending', 'invitation_id');
    expectError(await api('DELETE', `/v1/organizations/${organizationId}/invitations/inv_0000000000000000000000`), 404, 'resource_missing');
    const account = await verifiedUser(address);
    expectError(await accept(token, account.token), 400, 'token_invalid', 'token');
    expect(await eventsOf(ctx().service, ctx().projectId, 'organization.invitation.accepted')).not.toContainEqual(
      expect.objectContaining({ invitation_id: invitation.id }),
    );
  });

  it('an expired invitation is refused (token_expired) and listed as expired', async () => {
    const organizationId = await organizationWithOwner();
    const address = uniqueEmail('late');
    const invitation = await invite(organizationId, address);
    const token = await lastTokenSentTo(address);
    clock.advance(7 * DAY_MS + 1000);
    const account = await verifiedUser(address);
    expectError(await accept(token, account.token), 400, 'token_expired', 'token');
    const list = await api('GET', `/v1/organizations/${organizationId}/invitations`);
    expect(list.json().data).toMatchObject([{ id: invitation.id, status: 'expired' }]);
    expectError(await api('DELETE', `/v1/organizations/${organizationId}/invitations/${invitation.id}`), 409, 'invitation_not_pending');
    // A new invitation works again.
    await invite(organizationId, address);
    expect((await accept(await lastTokenSentTo(address), account.token)).statusCode).toBe(200);
  });

  it('refuses bad input, members, other projects and the wrong credential with catalog codes', async () => {
    const organizationId = await organizationWithOwner();
    const base = `/v1/organizations/${organizationId}/invitations`;
    expectError(await api('POST', base, { email: 'not an address' }), 400, 'parameter_invalid', 'email');
    expectError(await api('POST', base, {}), 400, 'parameter_missing', 'email');
    expectError(await api('POST', base, { email: uniqueEmail(), role: 'astronaut' }), 400, 'parameter_invalid', 'role');
    expectError(await api('POST', base, { email: uniqueEmail(), expires_at: 'never' }), 400, 'parameter_unknown', 'expires_at');
    expectError(
      await api('POST', '/v1/organizations/org_0000000000000000000000/invitations', { email: uniqueEmail() }),
      404,
      'resource_missing',
    );
    expectError(await api('GET', '/v1/organizations/org_0000000000000000000000/invitations'), 404, 'resource_missing');

    const member = await verifiedUser();
    expect((await api('POST', `/v1/organizations/${organizationId}/members`, { user_id: member.userId })).statusCode).toBe(201);
    expectError(await api('POST', base, { email: member.email }), 409, 'organization_member_exists', 'email');

    // Accepting while already a member (invited before joining another way) is refused and leaves the invitation pending.
    const address = uniqueEmail('joined');
    const invitation = await invite(organizationId, address);
    const token = await lastTokenSentTo(address);
    const joined = await verifiedUser(address);
    expect((await api('POST', `/v1/organizations/${organizationId}/members`, { user_id: joined.userId })).statusCode).toBe(201);
    expectError(await accept(token, joined.token), 409, 'organization_member_exists');
    expect((await api('GET', base)).json().data).toContainEqual(expect.objectContaining({ id: invitation.id, status: 'pending' }));

    // A token of another project is unknown here.
    const { secretKey: otherKey } = await ctx().service.projects.createProject({ name: 'Elsewhere' });
    const otherAuth = { authorization: `Bearer ${otherKey}` };
    expectError(await api('GET', base, undefined, otherAuth), 404, 'resource_missing');
    expectError(await api('DELETE', `${base}/${invitation.id}`, undefined, otherAuth), 404, 'resource_missing');
    const otherAccount = await signup(call, otherKey, { email: address });
    expectError(await accept(token, otherAccount.token), 400, 'token_invalid');

    expectError(await accept('x'.repeat(43), joined.token), 400, 'token_invalid', 'token');
    expectError(await accept('short', joined.token), 400, 'token_invalid', 'token');
    expectError(await api('POST', '/v1/invitations/accept', {}, bearer(joined.token)), 400, 'parameter_missing', 'token');
    expectError(await api('POST', '/v1/invitations/accept', { token }), 403, 'session_token_required');
    expectError(await call({ method: 'POST', url: '/v1/invitations/accept', payload: { token } }), 401, 'credential_missing');
  });
});
