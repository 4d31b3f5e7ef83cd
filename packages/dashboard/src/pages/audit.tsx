import { useId, useState } from 'react';
import { formatDateTime, formatRelative } from '../format.js';
import type { AuditLogEntry } from '@svc/sdk';
import { operations } from '../api.js';
import { JsonView, Page, PagedItems, present, usePagedList } from '../ui.js';

interface Filters {
  action: string;
  actor_id: string;
  resource_id: string;
  since: string;
  until: string;
}
const EMPTY: Filters = { action: '', actor_id: '', resource_id: '', since: '', until: '' };

function actorText(actor: AuditLogEntry['actor']): string {
  if (actor.type === 'dashboard') return `dashboard (${actor.key_id ?? ''})`;
  if (actor.type === 'session') return `session ${actor.id ?? ''} of ${actor.user_id ?? ''}`;
  if (actor.type === 'secret_key') return `key ${actor.id ?? ''}`;
  return actor.type;
}

/** `<input type="date">` gives a day; the API takes ISO times. */
const dayStart = (day: string) => (day === '' ? undefined : `${day}T00:00:00.000Z`);
const dayEnd = (day: string) => (day === '' ? undefined : `${day}T23:59:59.999Z`);

export function AuditPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const query = present({
    action: filters.action,
    actor_id: filters.actor_id,
    resource_id: filters.resource_id,
    since: dayStart(filters.since),
    until: dayEnd(filters.until),
  });
  const list = usePagedList((page) => operations.listAuditLogs({ query: { ...page, ...query } }), [query]);
  const ids = { action: useId(), actor: useId(), resource: useId(), since: useId(), until: useId() };
  const field = (key: keyof Filters, id: string, label: string, type = 'search', placeholder = '') => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type={type}
        placeholder={placeholder}
        value={draft[key]}
        onChange={(event) => setDraft({ ...draft, [key]: event.target.value })}
      />
    </div>
  );
  return (
    <Page title="Audit log">
      <form
        className="filters panel"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters(draft);
        }}
      >
        {field('action', ids.action, 'Action', 'search', 'wallet.credit')}
        {field('actor_id', ids.actor, 'Actor id', 'search', 'key_… or svc_ses_…')}
        {field('resource_id', ids.resource, 'Resource id', 'search', 'wlt_…')}
        {field('since', ids.since, 'From (UTC day)', 'date')}
        {field('until', ids.until, 'To (UTC day)', 'date')}
        <div className="actions">
          <button type="submit" className="primary">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(EMPTY);
              setFilters(EMPTY);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <PagedItems list={list} empty="No audit entries match.">
        {(data) => (
          <ul className="rows" data-testid="audit-list">
            {data.map((entry) => (
              <li key={entry.id} className="event">
                <div className="row">
                  <div>
                    <strong>{entry.action}</strong> {entry.resource.type} {entry.resource.id ?? ''} · {entry.outcome}
                    <div className="muted" title={formatDateTime(entry.created_at)}>
                      {actorText(entry.actor)} · {formatRelative(entry.created_at)}
                      {entry.ip === undefined || entry.ip === null ? '' : ` · ${entry.ip}`}
                    </div>
                  </div>
                  <button type="button" aria-expanded={open === entry.id} onClick={() => setOpen(open === entry.id ? undefined : entry.id)}>
                    {open === entry.id ? 'Hide' : 'Details'}
                  </button>
                </div>
                {open === entry.id ? <JsonView value={entry} label={`Audit entry ${entry.id}`} /> : null}
              </li>
            ))}
          </ul>
        )}
      </PagedItems>
    </Page>
  );
}
