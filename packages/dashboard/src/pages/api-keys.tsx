import { useId, useState } from 'react';
import type { ResponseBody } from '@svc/sdk';
import { operations } from '../api.js';
import { formatDateTime, formatRelative } from '../format.js';
import { Empty, ErrorBox, Loaded, Page, Pager, SearchBox, SecretOnce, StatusBadge, Table, useAction, usePagedList } from '../ui.js';

export function ApiKeysPage(props: { currentKeyId: string }) {
  const list = usePagedList((page) => operations.listApiKeys({ query: page }), []);
  const [filter, setFilter] = useState('');
  const [name, setName] = useState('');
  const [created, setCreated] = useState<ResponseBody<'POST /v1/api-keys'> | undefined>(undefined);
  const action = useAction();
  const nameId = useId();
  return (
    <Page title="API keys">
      <form
        className="panel inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            const key = await operations.createApiKey({ body: name.trim() === '' ? {} : { name: name.trim() } });
            setCreated(key);
            setName('');
            list.resource.reload();
          });
        }}
      >
        <label htmlFor={nameId}>New key name (optional)</label>
        <div className="search-row">
          <input id={nameId} value={name} maxLength={100} onChange={(event) => setName(event.target.value)} placeholder="billing worker" />
          <button type="submit" className="primary" disabled={action.pending}>
            Create key
          </button>
        </div>
      </form>
      {created?.secret_key === undefined ? null : (
        <SecretOnce label={`Secret key ${created.name ?? created.id}`} value={created.secret_key} />
      )}
      <ErrorBox error={action.error} />
      <SearchBox label="Filter by name or prefix" value={filter} onSearch={setFilter} />
      <Loaded resource={list.resource}>
        {({ data }) => {
          const shown = data.filter((key) =>
            `${key.name ?? ''} ${key.prefix} ${key.last4} ${key.id}`.toLowerCase().includes(filter.toLowerCase()),
          );
          if (shown.length === 0) return <Empty>{data.length === 0 ? 'No keys.' : 'No key on this page matches.'}</Empty>;
          return (
            <Table caption="Secret keys" columns={['Name', 'Key', 'Created', 'Status', { hidden: 'Actions' }]} testId="key-list">
              {shown.map((key) => (
                <tr key={key.id}>
                  <td>{key.name ?? '—'}</td>
                  <td>
                    <code>
                      {key.prefix}…{key.last4}
                    </code>
                  </td>
                  <td title={formatDateTime(key.created_at)}>{formatRelative(key.created_at)}</td>
                  <td>
                    {key.revoked_at === null ? key.id === props.currentKeyId ? 'in use here' : 'active' : <StatusBadge status="revoked" />}
                  </td>
                  <td>
                    {key.revoked_at === null && key.id !== props.currentKeyId ? (
                      <button
                        type="button"
                        className="danger"
                        aria-label={`Revoke key ${key.prefix}…${key.last4}`}
                        disabled={action.pending}
                        onClick={() => {
                          if (window.confirm(`Revoke ${key.prefix}…${key.last4}? Requests with it fail at once.`))
                            void action.run(() => operations.revokeApiKey({ path: { id: key.id } })).then(list.resource.reload);
                        }}
                      >
                        Revoke
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </Table>
          );
        }}
      </Loaded>
      <Pager {...list} />
    </Page>
  );
}
