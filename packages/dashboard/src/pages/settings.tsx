import { useId, useState } from 'react';
import type { OAuthProvider } from '@svc/sdk';
import { operations } from '../api.js';
import { formatDateTime } from '../format.js';
import { Empty, ErrorBox, Loaded, Page, SearchBox, useAction, useResource } from '../ui.js';

export function SettingsPage() {
  const providers = useResource(() => operations.listOAuthProviders(), []);
  const [filter, setFilter] = useState('');
  const [editing, setEditing] = useState<OAuthProvider | 'new' | undefined>(undefined);
  const action = useAction();
  return (
    <Page
      title="Settings"
      actions={
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          Configure a provider
        </button>
      }
    >
      <h2>OAuth and OpenID Connect providers</h2>
      <p className="muted">
        Client secrets are write-only: they are stored sealed and never shown again. Leave the secret empty to keep the stored one.
      </p>
      {editing === undefined ? null : (
        <ProviderForm
          provider={editing === 'new' ? undefined : editing}
          onDone={() => {
            setEditing(undefined);
            providers.reload();
          }}
        />
      )}
      <ErrorBox error={action.error} />
      <SearchBox label="Filter providers" value={filter} onSearch={setFilter} />
      <Loaded resource={providers}>
        {({ data }) => {
          const shown = data.filter((provider) =>
            `${provider.provider} ${provider.client_id}`.toLowerCase().includes(filter.toLowerCase()),
          );
          if (shown.length === 0)
            return (
              <Empty>
                {data.length === 0 ? 'No provider configured. Users sign in with email and password only.' : 'No provider matches.'}
              </Empty>
            );
          return (
            <ul className="rows">
              {shown.map((provider) => (
                <li key={provider.provider} className="panel">
                  <h3>{provider.provider}</h3>
                  <dl className="facts">
                    <dt>Kind</dt>
                    <dd>{provider.kind}</dd>
                    <dt>Client id</dt>
                    <dd>
                      <code>{provider.client_id}</code>
                    </dd>
                    {provider.issuer === null ? null : (
                      <>
                        <dt>Issuer</dt>
                        <dd>{provider.issuer}</dd>
                      </>
                    )}
                    <dt>Scopes</dt>
                    <dd>{provider.scopes.join(' ')}</dd>
                    <dt>Redirect URIs</dt>
                    <dd>
                      <ul className="plain">
                        {provider.redirect_uris.map((uri) => (
                          <li key={uri}>
                            <code>{uri}</code>
                          </li>
                        ))}
                      </ul>
                    </dd>
                    <dt>Client secret</dt>
                    <dd>•••••••• (write-only)</dd>
                    <dt>Updated</dt>
                    <dd>{formatDateTime(provider.updated_at)}</dd>
                  </dl>
                  <div className="actions">
                    <button type="button" onClick={() => setEditing(provider)}>
                      Edit
                    </button>
                    <button
                      type="button"
                      className="danger"
                      disabled={action.pending}
                      onClick={() => {
                        if (window.confirm(`Remove ${provider.provider}? Its users can no longer sign in with it.`))
                          void action
                            .run(() => operations.deleteOAuthProvider({ path: { provider: provider.provider } }))
                            .then(providers.reload);
                      }}
                    >
                      Remove
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
    </Page>
  );
}

function ProviderForm(props: { provider: OAuthProvider | undefined; onDone: () => void }) {
  const existing = props.provider;
  const [key, setKey] = useState(existing?.provider ?? '');
  const [clientId, setClientId] = useState(existing?.client_id ?? '');
  const [secret, setSecret] = useState('');
  const [issuer, setIssuer] = useState(existing?.issuer ?? '');
  const [redirects, setRedirects] = useState(existing?.redirect_uris.join('\n') ?? '');
  const action = useAction();
  const ids = { key: useId(), client: useId(), secret: useId(), issuer: useId(), redirects: useId() };
  return (
    <form
      className="panel"
      onSubmit={(event) => {
        event.preventDefault();
        const body = {
          client_id: clientId.trim(),
          redirect_uris: redirects
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean),
          ...(secret === '' ? {} : { client_secret: secret }),
          ...(issuer.trim() === '' ? {} : { issuer: issuer.trim() }),
        };
        void action
          .run(() => operations.configureOAuthProvider({ path: { provider: key.trim() }, body }))
          .then((ok) => ok && props.onDone());
      }}
    >
      <h3>{existing === undefined ? 'Configure a provider' : `Edit ${existing.provider}`}</h3>
      <label htmlFor={ids.key}>Provider (google, github, apple, or a key for a generic OpenID Connect provider)</label>
      <input id={ids.key} value={key} onChange={(event) => setKey(event.target.value)} required disabled={existing !== undefined} />
      <label htmlFor={ids.client}>Client id</label>
      <input id={ids.client} value={clientId} onChange={(event) => setClientId(event.target.value)} required />
      <label htmlFor={ids.secret}>Client secret {existing === undefined ? '' : '(leave empty to keep the stored one)'}</label>
      <input
        id={ids.secret}
        type="password"
        autoComplete="new-password"
        value={secret}
        onChange={(event) => setSecret(event.target.value)}
      />
      <label htmlFor={ids.issuer}>Issuer URL (generic OpenID Connect only)</label>
      <input id={ids.issuer} type="url" value={issuer} onChange={(event) => setIssuer(event.target.value)} />
      <label htmlFor={ids.redirects}>Redirect URIs, one per line</label>
      <textarea id={ids.redirects} rows={3} value={redirects} onChange={(event) => setRedirects(event.target.value)} required />
      <ErrorBox error={action.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={action.pending}>
          Save
        </button>
        <button type="button" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
