import { useId, useState } from 'react';
import { formatDateTime, formatRelative } from '../format.js';
import { navigate } from '../router.js';
import { operations } from '../api.js';
import { JsonView, Link, Loaded, Page, PagedItems, present, SearchBox, useEventTypes, usePagedList, useResource } from '../ui.js';

export function EventsPage() {
  const [type, setType] = useState('');
  const list = usePagedList((page) => operations.listEvents({ query: { ...page, ...present({ type }) } }), [type]);
  const typeId = useId();
  const eventTypes = useEventTypes();
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <Page title="Events">
      <div className="filters">
        <div className="inline-field">
          <label htmlFor={typeId}>Type</label>
          <select id={typeId} value={type} onChange={(event) => setType(event.target.value)}>
            <option value="">All types</option>
            {eventTypes.map((eventType) => (
              <option key={eventType} value={eventType}>
                {eventType}
              </option>
            ))}
          </select>
        </div>
        <SearchBox
          label="Open an event by id"
          placeholder="evt_…"
          value=""
          onSearch={(value) => value !== '' && navigate(`/events/${value}`)}
        />
      </div>
      <PagedItems list={list} empty={type === '' ? 'No events yet.' : `No ${type} events.`}>
        {(data) => (
          <ul className="rows" data-testid="event-list">
            {data.map((event) => (
              <li key={event.id} className="event">
                <div className="row">
                  <div>
                    <strong>{event.type}</strong> <Link to={`/events/${event.id}`}>{event.id}</Link>
                    <div className="muted" title={formatDateTime(event.created_at)}>
                      {formatRelative(event.created_at)}
                    </div>
                  </div>
                  <button type="button" aria-expanded={open === event.id} onClick={() => setOpen(open === event.id ? undefined : event.id)}>
                    {open === event.id ? 'Hide data' : 'Show data'}
                  </button>
                </div>
                {open === event.id ? <JsonView value={event} label={`Event ${event.id}`} /> : null}
              </li>
            ))}
          </ul>
        )}
      </PagedItems>
    </Page>
  );
}

export function EventPage(props: { id: string }) {
  const event = useResource(() => operations.getEvent({ path: { id: props.id } }), [props.id]);
  return (
    <Page title="Event" back={{ to: '/events', label: 'Events' }}>
      <Loaded resource={event}>
        {(data) => (
          <section className="panel" aria-labelledby="event-title">
            <h2 id="event-title">{data.type}</h2>
            <p className="muted">
              <code>{data.id}</code> · {formatDateTime(data.created_at)}
            </p>
            <JsonView value={data} label={`Event ${data.id}`} />
          </section>
        )}
      </Loaded>
    </Page>
  );
}
