import { useState } from 'react';
import { operations } from '../api.js';
import { formatAmount, formatDateTime, formatRelative } from '../format.js';
import { UserPasskeys } from './user-passkeys.js';
import {
  Empty,
  ErrorBox,
  Link,
  Loaded,
  Page,
  PagedItems,
  Panel,
  present,
  SearchBox,
  StatusBadge,
  Table,
  useAction,
  usePagedList,
  useResource,
} from '../ui.js';

export function UsersPage() {
  const [email, setEmail] = useState('');
  const list = usePagedList((page) => operations.listUsers({ query: { ...page, ...present({ email }) } }), [email]);
  return (
    <Page title="Users">
      <SearchBox label="Search by email" placeholder="ada@example.com" value={email} onSearch={setEmail} />
      <PagedItems
        list={list}
        empty={email === '' ? 'No users yet. They appear here once they sign up.' : `No user with the email ${email}.`}
      >
        {(data) => (
          <Table caption="Users" columns={['Email', 'Name', 'Roles', 'Status', 'Created']}>
            {data.map((user) => (
              <tr key={user.id}>
                <td className="break">
                  <Link to={`/users/${user.id}`}>{user.email}</Link>
                </td>
                <td>{user.name}</td>
                <td>{user.roles.join(', ') || '—'}</td>
                <td>{user.banned ? <StatusBadge status="banned" /> : user.email_verified ? 'verified' : 'unverified'}</td>
                <td title={formatDateTime(user.created_at)}>{formatRelative(user.created_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </PagedItems>
    </Page>
  );
}

export function UserPage(props: { id: string }) {
  const path = { id: props.id };
  const user = useResource(() => operations.getUser({ path }), [props.id]);
  const sessions = usePagedList((page) => operations.listUserSessions({ path, query: page }), [props.id]);
  const wallets = usePagedList((page) => operations.listWallets({ query: { ...page, user_id: props.id } }), [props.id]);
  const mfa = useResource(() => operations.getUserMfa({ path }), [props.id]);
  const action = useAction();
  const act = (call: () => Promise<unknown>, after: () => void) => void action.run(call).then((ok) => ok && after());
  return (
    <Page title="User" back={{ to: '/users', label: 'Users' }}>
      <ErrorBox error={action.error} />
      <Loaded resource={user}>
        {(data) => (
          <Panel id="profile" titleClassName="break" title={data.email}>
            <dl className="facts">
              <dt>Id</dt>
              <dd>
                <code>{data.id}</code>
              </dd>
              <dt>Name</dt>
              <dd>{data.name || '—'}</dd>
              <dt>Email</dt>
              <dd>{data.email_verified ? 'verified' : 'not verified'}</dd>
              <dt>Roles</dt>
              <dd>{data.roles.join(', ') || '—'}</dd>
              <dt>Status</dt>
              <dd>{data.banned ? <StatusBadge status="banned" /> : 'active'}</dd>
              <dt>Created</dt>
              <dd>{formatDateTime(data.created_at)}</dd>
            </dl>
            <div className="actions">
              {data.banned ? (
                <button type="button" disabled={action.pending} onClick={() => act(() => operations.unbanUser({ path }), user.reload)}>
                  Unban
                </button>
              ) : (
                <button
                  type="button"
                  className="danger"
                  disabled={action.pending}
                  onClick={() =>
                    act(
                      () => operations.banUser({ path }),
                      () => (user.reload(), sessions.resource.reload()),
                    )
                  }
                >
                  Ban (ends every session)
                </button>
              )}
            </div>
            <h3>Identities</h3>
            {data.identities === undefined || data.identities.length === 0 ? (
              <Empty>No linked provider accounts.</Empty>
            ) : (
              <ul className="plain">
                {data.identities.map((identity) => (
                  <li key={`${identity.provider}:${identity.subject}`}>
                    <strong>{identity.provider}</strong> {identity.email ?? identity.subject} · last used{' '}
                    {formatRelative(identity.last_used_at)}
                  </li>
                ))}
              </ul>
            )}
          </Panel>
        )}
      </Loaded>

      <Panel
        id="factors"
        title="Second factors"
        actions={
          <button
            type="button"
            className="danger"
            disabled={action.pending || mfa.data?.totp.status === 'none'}
            onClick={() => void action.run(() => operations.resetUserMfa({ path })).then((ok) => ok && mfa.reload())}
          >
            Reset second factors
          </button>
        }
      >
        <Loaded resource={mfa}>
          {(data) => (
            <dl className="facts" data-testid="mfa-status">
              <dt>Authenticator app</dt>
              <dd>
                {data.totp.status === 'active'
                  ? `active since ${formatDateTime(data.totp.activated_at ?? '')}`
                  : data.totp.status === 'pending'
                    ? 'enrolment not confirmed'
                    : 'none'}
              </dd>
              <dt>Recovery codes left</dt>
              <dd>{data.totp.status === 'active' ? data.recovery_codes_left : '—'}</dd>
            </dl>
          )}
        </Loaded>
      </Panel>

      <Panel
        id="sessions"
        title="Active sessions"
        actions={
          <button
            type="button"
            className="danger"
            disabled={action.pending || sessions.resource.data?.data.length === 0}
            onClick={() => act(() => operations.revokeUserSessions({ path }), sessions.resource.reload)}
          >
            Revoke all
          </button>
        }
      >
        <PagedItems list={sessions} empty="No active sessions.">
          {(data) => (
            <ul className="rows" data-testid="session-list">
              {data.map((session) => (
                <li key={session.id} className="row">
                  <div>
                    <code>{session.id}</code>
                    <div className="muted">
                      {session.ip ?? 'unknown IP'} · {session.user_agent ?? 'unknown client'} · last used{' '}
                      {formatRelative(session.last_used_at)} · expires {formatDateTime(session.expires_at)}
                    </div>
                  </div>
                  <button
                    type="button"
                    aria-label={`Revoke session ${session.id}`}
                    disabled={action.pending}
                    onClick={() => act(() => operations.revokeSession({ path: { id: session.id } }), sessions.resource.reload)}
                  >
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )}
        </PagedItems>
      </Panel>

      <UserPasskeys userId={props.id} />

      <Panel id="wallets" title="Wallets">
        <PagedItems list={wallets} empty="No wallets.">
          {(data) => (
            <ul className="plain">
              {data.map((wallet) => (
                <li key={wallet.id}>
                  <Link to={`/wallets/${wallet.id}`}>{wallet.id}</Link> · {formatAmount(wallet.balance, wallet.currency)} · {wallet.status}
                </li>
              ))}
            </ul>
          )}
        </PagedItems>
      </Panel>
    </Page>
  );
}
