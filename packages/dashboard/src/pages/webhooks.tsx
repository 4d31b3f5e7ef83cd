import { useId, useState } from 'react';
import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from '@svc/sdk';
import { operations } from '../api.js';
import { formatDateTime, formatLatency, formatRelative } from '../format.js';
import { navigate } from '../router.js';
import {
  Dialog,
  Empty,
  ErrorBox,
  Link,
  Loaded,
  Page,
  PagedItems,
  Pager,
  Panel,
  present,
  SearchBox,
  SecretOnce,
  StatusBadge,
  Table,
  useAction,
  useEventTypes,
  usePagedList,
  useResource,
} from '../ui.js';

function EventPicker(props: { selected: readonly string[]; onChange: (events: string[]) => void }) {
  const all = props.selected.includes('*');
  const eventTypes = useEventTypes();
  const toggle = (type: string, on: boolean) =>
    props.onChange(on ? [...props.selected.filter((item) => item !== type), type] : props.selected.filter((item) => item !== type));
  return (
    <fieldset className="event-picker">
      <legend>Events</legend>
      <label className="check">
        <input type="checkbox" checked={all} onChange={(event) => props.onChange(event.target.checked ? ['*'] : [])} /> All events (*)
      </label>
      {eventTypes.map((type) => (
        <label key={type} className="check">
          <input
            type="checkbox"
            disabled={all}
            checked={all || props.selected.includes(type)}
            onChange={(event) => toggle(type, event.target.checked)}
          />{' '}
          {type}
        </label>
      ))}
    </fieldset>
  );
}

export function WebhooksPage() {
  const [filter, setFilter] = useState('');
  const list = usePagedList((page) => operations.listWebhooks({ query: page }), []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<WebhookEndpointWithSecret | undefined>(undefined);
  return (
    <Page
      title="Webhooks"
      actions={
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          Add endpoint
        </button>
      }
    >
      {created?.secret === undefined ? null : (
        <div className="panel">
          <p>
            Endpoint <Link to={`/webhooks/${created.id}`}>{created.url}</Link> created.
          </p>
          <SecretOnce label="Signing secret" value={created.secret} />
        </div>
      )}
      <SearchBox label="Filter by URL or description" value={filter} onSearch={setFilter} />
      <Loaded resource={list.resource}>
        {({ data }) => {
          const shown = data.filter((endpoint) =>
            `${endpoint.url} ${endpoint.description ?? ''}`.toLowerCase().includes(filter.toLowerCase()),
          );
          if (shown.length === 0)
            return (
              <Empty>
                {data.length === 0 ? 'No endpoints yet. Add one to receive signed events.' : 'No endpoint on this page matches.'}
              </Empty>
            );
          return (
            <ul className="rows" data-testid="endpoint-list">
              {shown.map((endpoint) => (
                <li key={endpoint.id} className="row">
                  <div>
                    <Link to={`/webhooks/${endpoint.id}`}>{endpoint.url}</Link>
                    <div className="muted">{[endpoint.description, endpoint.events.join(', ')].filter(Boolean).join(' · ')}</div>
                  </div>
                  <EndpointStatus endpoint={endpoint} />
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
      <Pager {...list} />
      {creating ? (
        <CreateEndpointDialog
          onClose={() => setCreating(false)}
          onCreated={(endpoint) => {
            setCreating(false);
            setCreated(endpoint);
            list.resource.reload();
          }}
        />
      ) : null}
    </Page>
  );
}

function CreateEndpointDialog(props: { onClose: () => void; onCreated: (endpoint: WebhookEndpointWithSecret) => void }) {
  const [url, setUrl] = useState('https://');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>(['*']);
  const action = useAction();
  const ids = { url: useId(), description: useId() };
  return (
    <Dialog title="Add a webhook endpoint" open onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            const endpoint = await operations.createWebhook({
              body: { url: url.trim(), events, ...(description.trim() === '' ? {} : { description: description.trim() }) },
            });
            props.onCreated(endpoint);
          });
        }}
      >
        <label htmlFor={ids.url}>URL</label>
        <input id={ids.url} type="url" value={url} onChange={(event) => setUrl(event.target.value)} required autoFocus />
        <label htmlFor={ids.description}>Description (optional)</label>
        <input id={ids.description} value={description} onChange={(event) => setDescription(event.target.value)} />
        <EventPicker selected={events} onChange={setEvents} />
        <ErrorBox error={action.error} />
        <div className="actions">
          <button type="submit" className="primary" disabled={action.pending || events.length === 0}>
            Create
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function WebhookPage(props: { id: string }) {
  const endpoint = useResource(() => operations.getWebhook({ path: { id: props.id } }), [props.id]);
  const [status, setStatus] = useState<WebhookDelivery['status'] | ''>('');
  const deliveries = usePagedList(
    (page) => operations.listWebhookDeliveries({ path: { id: props.id }, query: { ...page, ...present({ status }) } }),
    [props.id, status],
  );
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const [editing, setEditing] = useState<string[] | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const action = useAction();
  const statusId = useId();
  const run = (work: () => Promise<unknown>, message: string) =>
    void action.run(work).then((ok) => {
      if (ok && message !== '') setNotice(message);
      endpoint.reload();
      deliveries.resource.reload();
    });
  return (
    <Page title="Webhook endpoint" back={{ to: '/webhooks', label: 'Webhooks' }}>
      <ErrorBox error={action.error} />
      {notice === undefined ? null : (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <Loaded resource={endpoint}>
        {(data) => (
          <Panel
            id="endpoint-title"
            titleClassName="break"
            title={
              <>
                {data.url} <EndpointStatus endpoint={data} />
              </>
            }
          >
            {data.disabled_reason === 'failing' ? (
              <p className="notice" role="alert" data-testid="endpoint-failing">
                Switched off automatically: every attempt to this endpoint failed for days. Its pending deliveries wait. Fix the receiver,
                enable the endpoint, then recover what it missed.
              </p>
            ) : null}
            <dl className="facts">
              <dt>Id</dt>
              <dd>
                <code>{data.id}</code>
              </dd>
              <dt>Description</dt>
              <dd>{data.description ?? '—'}</dd>
              <dt>Events</dt>
              <dd>{data.events.join(', ')}</dd>
              <dt>Rate limit</dt>
              <dd>{data.rate_limit_per_second === null ? 'none' : `${data.rate_limit_per_second} per second`}</dd>
              <dt>Created</dt>
              <dd>{formatDateTime(data.created_at)}</dd>
            </dl>
            <RecoverForm
              disabled={action.pending}
              onRecover={(since) =>
                run(async () => {
                  const recovery = await operations.recoverWebhook({ path: { id: data.id }, body: { since } });
                  setNotice(`Recovery started: ${recovery.deliveries} deliver${recovery.deliveries === 1 ? 'y' : 'ies'} to send again.`);
                }, '')
              }
            />
            {secret === undefined ? null : <SecretOnce label="New signing secret (the old one keeps signing for 24 h)" value={secret} />}
            {editing === undefined ? null : (
              <form
                onSubmit={(event) => {
                  event.preventDefault();
                  run(
                    () => operations.updateWebhook({ path: { id: data.id }, body: { events: editing } }).then(() => setEditing(undefined)),
                    'Events saved.',
                  );
                }}
              >
                <EventPicker selected={editing} onChange={setEditing} />
                <div className="actions">
                  <button type="submit" className="primary" disabled={editing.length === 0 || action.pending}>
                    Save events
                  </button>
                  <button type="button" onClick={() => setEditing(undefined)}>
                    Cancel
                  </button>
                </div>
              </form>
            )}
            <div className="actions">
              <button
                type="button"
                disabled={action.pending}
                onClick={() =>
                  run(() => operations.sendTestWebhook({ path: { id: data.id } }), 'Test event sent; its delivery appears below.')
                }
              >
                Send test event
              </button>
              <button type="button" disabled={action.pending || editing !== undefined} onClick={() => setEditing(data.events)}>
                Edit events
              </button>
              <button
                type="button"
                disabled={action.pending}
                onClick={() =>
                  run(
                    () => operations.updateWebhook({ path: { id: data.id }, body: { enabled: !data.enabled } }),
                    data.enabled ? 'Endpoint disabled.' : 'Endpoint enabled.',
                  )
                }
              >
                {data.enabled ? 'Disable' : 'Enable'}
              </button>
              <button
                type="button"
                disabled={action.pending}
                onClick={() =>
                  run(
                    () => operations.rotateWebhookSecret({ path: { id: data.id } }).then((rotated) => setSecret(rotated.secret)),
                    'Secret rotated.',
                  )
                }
              >
                Rotate secret
              </button>
            </div>
          </Panel>
        )}
      </Loaded>

      <Panel
        id="deliveries"
        title="Deliveries"
        actions={
          <div className="inline-field">
            <label htmlFor={statusId}>Status</label>
            <select id={statusId} value={status} onChange={(event) => setStatus(event.target.value as WebhookDelivery['status'] | '')}>
              <option value="">All</option>
              <option value="pending">Pending</option>
              <option value="succeeded">Succeeded</option>
              <option value="failed">Failed</option>
            </select>
            <button type="button" onClick={deliveries.resource.reload}>
              Refresh
            </button>
          </div>
        }
      >
        <PagedItems
          list={deliveries}
          empty={<>No deliveries{status === '' ? '' : ` with status ${status}`}. Send a test event to see one.</>}
        >
          {(data) => (
            <ul className="rows" data-testid="delivery-list">
              {data.map((delivery) => (
                <li key={delivery.id} className="delivery" data-testid="delivery" data-status={delivery.status}>
                  <div className="row">
                    <div>
                      <StatusBadge status={delivery.status} /> <strong>{delivery.event_type}</strong>{' '}
                      <Link to={`/events/${delivery.event_id}`}>{delivery.event_id}</Link>
                      <div className="muted">
                        {delivery.attempt_count} attempt{delivery.attempt_count === 1 ? '' : 's'} · {formatRelative(delivery.created_at)}
                        {delivery.next_attempt_at === null ? '' : ` · next ${formatRelative(delivery.next_attempt_at)}`}
                      </div>
                    </div>
                    <button
                      type="button"
                      aria-label={`Retry delivery ${delivery.id}`}
                      disabled={action.pending}
                      onClick={() =>
                        run(
                          () => operations.retryWebhookDelivery({ path: { id: props.id, delivery_id: delivery.id } }),
                          'Retried; the new attempt is listed.',
                        )
                      }
                    >
                      Retry
                    </button>
                  </div>
                  {delivery.attempts.length === 0 ? null : (
                    <Table
                      caption={`Attempts of ${delivery.id}`}
                      columns={['#', 'When', 'Status', 'Latency', 'Response']}
                      className="attempts"
                    >
                      {delivery.attempts.map((attempt) => (
                        <tr key={attempt.attempt}>
                          <td>
                            {attempt.attempt}
                            {attempt.kind === 'manual' ? ' (manual)' : ''}
                          </td>
                          <td title={formatDateTime(attempt.created_at)}>{formatRelative(attempt.created_at)}</td>
                          <td data-testid="attempt-status">{attempt.status_code ?? 'no answer'}</td>
                          <td>{formatLatency(attempt.latency_ms)}</td>
                          <td className="excerpt">{attempt.response_body?.slice(0, 200) ?? attempt.error ?? ''}</td>
                        </tr>
                      ))}
                    </Table>
                  )}
                </li>
              ))}
            </ul>
          )}
        </PagedItems>
      </Panel>
      <p>
        <button type="button" className="link" onClick={() => navigate('/events')}>
          All events →
        </button>
      </p>
    </Page>
  );
}

/** Enabled, or disabled with its reason: `failing` (switched off automatically) or by hand. */
function EndpointStatus(props: { endpoint: WebhookEndpoint }) {
  const { endpoint } = props;
  if (endpoint.enabled) return <StatusBadge status="enabled" />;
  return (
    <span data-testid="endpoint-status">
      <StatusBadge status={endpoint.disabled_reason === 'failing' ? 'failed' : 'disabled'} />{' '}
      <span className="muted">{endpoint.disabled_reason === 'failing' ? 'disabled: failing' : 'disabled by hand'}</span>
    </span>
  );
}

/** Re-sends every subscribed event since a time that was not delivered (`POST /v1/webhooks/{id}/recover`). */
function RecoverForm(props: { disabled: boolean; onRecover: (since: string) => void }) {
  const [since, setSince] = useState(() => localInput(new Date(Date.now() - 24 * 60 * 60 * 1000)));
  const id = useId();
  return (
    <form
      className="inline-field"
      onSubmit={(event) => {
        event.preventDefault();
        props.onRecover(new Date(since).toISOString());
      }}
    >
      <label htmlFor={id}>Recover since</label>
      <input id={id} type="datetime-local" value={since} onChange={(event) => setSince(event.target.value)} required />
      <button type="submit" disabled={props.disabled || since === ''}>
        Recover
      </button>
    </form>
  );
}

/** A date as a `datetime-local` input's value, in the browser's time zone. */
function localInput(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
