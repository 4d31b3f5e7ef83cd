import { useState } from 'react';
import { operations } from '../api.js';
import { Markdown } from '../markdown-view.js';
import { JsonView, Loaded, Page, useResource } from '../ui.js';

/**
 * The event catalog (`GET /v1/event-types`): every type the service emits, its description (markdown,
 * rendered by markdown-view.tsx) and the JSON Schema of its data.
 */
export function EventTypesPage() {
  const catalog = useResource(() => operations.listEventTypes(), []);
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <Page title="Event catalog">
      <Loaded resource={catalog}>
        {({ data }) => (
          <ul className="rows" data-testid="event-type-list">
            {data.map((entry) => (
              <li key={entry.type} className="event">
                <div className="row">
                  <div>
                    <strong>{entry.type}</strong>
                    <Markdown source={entry.description} className="muted" />
                  </div>
                  <button
                    type="button"
                    aria-expanded={open === entry.type}
                    onClick={() => setOpen(open === entry.type ? undefined : entry.type)}
                  >
                    {open === entry.type ? 'Hide schema' : 'Show schema'}
                  </button>
                </div>
                {open === entry.type ? <JsonView value={entry.schema} label={`Schema of ${entry.type}`} /> : null}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
    </Page>
  );
}
