import { useId, useState } from 'react';
import { operations } from '../api.js';
import { formatDateTime } from '../format.js';
import { ErrorBox, PagedItems, StatusBadge, useAction, usePagedList } from '../ui.js';

/**
 * An organization's email domains: each one's status and, while pending, the TXT record the
 * organization must publish before "Verify" can find it. SSO answers only for verified domains.
 */
export function OrganizationDomains(props: { organizationId: string }) {
  const id = props.organizationId;
  const domains = usePagedList((page) => operations.listOrganizationDomains({ path: { id }, query: page }), [id], {
    cursor: (domain) => domain.domain,
  });
  const [domain, setDomain] = useState('');
  const [verification, setVerification] = useState<'dns' | 'manual'>('dns');
  const action = useAction();
  const ids = { domain: useId(), verification: useId() };
  const change = (run: () => Promise<unknown>) => void action.run(run).then(domains.resource.reload);
  return (
    <section className="panel" aria-labelledby="domains">
      <h2 id="domains">Domains</h2>
      <form
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void action
            .run(() => operations.addOrganizationDomain({ path: { id }, body: { domain: domain.trim(), verification } }))
            .then((ok) => {
              if (ok) setDomain('');
              domains.resource.reload();
            });
        }}
      >
        <label htmlFor={ids.domain}>Add a domain</label>
        <div className="search-row">
          <input id={ids.domain} value={domain} onChange={(event) => setDomain(event.target.value)} required placeholder="acme.com" />
          <label htmlFor={ids.verification} className="visually-hidden">
            Verification
          </label>
          <select
            id={ids.verification}
            value={verification}
            onChange={(event) => setVerification(event.target.value === 'manual' ? 'manual' : 'dns')}
          >
            <option value="dns">by DNS TXT record</option>
            <option value="manual">manually (I vouch for it)</option>
          </select>
          <button type="submit" className="primary" disabled={action.pending}>
            Add
          </button>
        </div>
      </form>
      <ErrorBox error={action.error} />
      <PagedItems list={domains} empty="No domains. SSO through this organization's connection answers only for its verified domains.">
        {(data) => (
          <ul className="rows">
            {data.map((item) => (
              <li key={item.domain} className="row">
                <div>
                  {item.domain} <StatusBadge status={item.status} />
                  <div className="muted">
                    {item.status === 'verified'
                      ? `verified ${item.verified_at === null ? '' : formatDateTime(item.verified_at)} (${item.verification})`
                      : 'publish this TXT record, then verify:'}
                  </div>
                  {item.status === 'pending' ? (
                    <div>
                      <code>{item.txt_record.name}</code> TXT <code>{item.txt_record.value}</code>
                    </div>
                  ) : null}
                </div>
                <div>
                  {item.status === 'pending' ? (
                    <button
                      type="button"
                      aria-label={`Verify ${item.domain}`}
                      disabled={action.pending}
                      onClick={() => change(() => operations.verifyOrganizationDomain({ path: { id, domain: item.domain } }))}
                    >
                      Verify
                    </button>
                  ) : null}
                  <button
                    type="button"
                    aria-label={`Remove domain ${item.domain}`}
                    disabled={action.pending}
                    onClick={() => change(() => operations.deleteOrganizationDomain({ path: { id, domain: item.domain } }))}
                  >
                    Remove
                  </button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </PagedItems>
    </section>
  );
}
