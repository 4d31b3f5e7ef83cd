import { useId, useState } from 'react';
import { operations } from '../api.js';
import { formatDateTime, formatRelative } from '../format.js';
import { OrganizationDomains } from './organization-domains.js';
import {
  Empty,
  ErrorBox,
  Link,
  Loaded,
  Page,
  PagedItems,
  Pager,
  SearchBox,
  StatusBadge,
  useAction,
  usePagedList,
  useResource,
} from '../ui.js';

export function OrganizationsPage() {
  const list = usePagedList((page) => operations.listOrganizations({ query: page }), []);
  const [filter, setFilter] = useState('');
  const [name, setName] = useState('');
  const action = useAction();
  const nameId = useId();
  return (
    <Page title="Organizations">
      <form
        className="panel inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void action
            .run(() => operations.createOrganization({ body: { name: name.trim() } }))
            .then((ok) => {
              if (ok) setName('');
              list.resource.reload();
            });
        }}
      >
        <label htmlFor={nameId}>New organization</label>
        <div className="search-row">
          <input id={nameId} value={name} onChange={(event) => setName(event.target.value)} required placeholder="Acme Inc." />
          <button type="submit" className="primary" disabled={action.pending}>
            Create
          </button>
        </div>
      </form>
      <ErrorBox error={action.error} />
      <SearchBox label="Filter by name or slug" value={filter} onSearch={setFilter} />
      <Loaded resource={list.resource}>
        {({ data }) => {
          const shown = data.filter((organization) =>
            `${organization.name} ${organization.slug}`.toLowerCase().includes(filter.toLowerCase()),
          );
          if (shown.length === 0)
            return <Empty>{data.length === 0 ? 'No organizations yet.' : 'No organization on this page matches.'}</Empty>;
          return (
            <ul className="rows">
              {shown.map((organization) => (
                <li key={organization.id} className="row">
                  <div>
                    <Link to={`/organizations/${organization.id}`}>{organization.name}</Link>
                    <div className="muted">
                      {organization.slug} · created {formatRelative(organization.created_at)}
                    </div>
                  </div>
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
      <Pager {...list} />
    </Page>
  );
}

export function OrganizationPage(props: { id: string }) {
  const path = { id: props.id };
  const organization = useResource(() => operations.getOrganization({ path }), [props.id]);
  const members = usePagedList((page) => operations.listOrganizationMembers({ path, query: page }), [props.id], {
    cursor: (member) => member.user_id,
  });
  const invitations = usePagedList((page) => operations.listOrganizationInvitations({ path, query: page }), [props.id]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const action = useAction();
  const ids = { email: useId(), role: useId() };
  return (
    <Page title="Organization" back={{ to: '/organizations', label: 'Organizations' }}>
      <ErrorBox error={action.error} />
      <Loaded resource={organization}>
        {(data) => (
          <section className="panel">
            <h2>{data.name}</h2>
            <p className="muted">
              <code>{data.id}</code> · {data.slug} · created {formatDateTime(data.created_at)}
            </p>
          </section>
        )}
      </Loaded>
      <section className="panel" aria-labelledby="members">
        <h2 id="members">Members</h2>
        <PagedItems list={members} empty="No members.">
          {(data) => (
            <ul className="rows">
              {data.map((member) => (
                <li key={member.user_id} className="row">
                  <div>
                    <Link to={`/users/${member.user_id}`}>{member.user_id}</Link> · {member.role}
                  </div>
                  <button
                    type="button"
                    aria-label={`Remove member ${member.user_id}`}
                    disabled={action.pending}
                    onClick={() =>
                      void action
                        .run(() => operations.removeOrganizationMember({ path: { id: props.id, user_id: member.user_id } }))
                        .then(members.resource.reload)
                    }
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
        </PagedItems>
      </section>
      <section className="panel" aria-labelledby="invitations">
        <h2 id="invitations">Invitations</h2>
        <form
          className="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            void action
              .run(() => operations.createOrganizationInvitation({ path, body: { email: email.trim(), role } }))
              .then((ok) => {
                if (ok) setEmail('');
                invitations.resource.reload();
              });
          }}
        >
          <label htmlFor={ids.email}>Invite by email</label>
          <div className="search-row">
            <input id={ids.email} type="email" value={email} onChange={(event) => setEmail(event.target.value)} required />
            <label htmlFor={ids.role} className="visually-hidden">
              Role
            </label>
            <select id={ids.role} value={role} onChange={(event) => setRole(event.target.value)}>
              <option value="member">member</option>
              <option value="admin">admin</option>
              <option value="owner">owner</option>
            </select>
            <button type="submit" className="primary" disabled={action.pending}>
              Invite
            </button>
          </div>
        </form>
        <PagedItems list={invitations} empty="No invitations.">
          {(data) => (
            <ul className="rows">
              {data.map((invitation) => (
                <li key={invitation.id} className="row">
                  <div>
                    {invitation.email} · {invitation.role} <StatusBadge status={invitation.status} />
                    <div className="muted">expires {formatDateTime(invitation.expires_at)}</div>
                  </div>
                  {invitation.status === 'pending' ? (
                    <button
                      type="button"
                      aria-label={`Revoke invitation for ${invitation.email}`}
                      disabled={action.pending}
                      onClick={() =>
                        void action
                          .run(() => operations.revokeOrganizationInvitation({ path: { id: props.id, invitation_id: invitation.id } }))
                          .then(invitations.resource.reload)
                      }
                    >
                      Revoke
                    </button>
                  ) : null}
                </li>
              ))}
            </ul>
          )}
        </PagedItems>
      </section>
      <OrganizationDomains organizationId={props.id} />
    </Page>
  );
}
