import type { Passkey } from '@svc/sdk';
import { operations } from '../api.js';
import { formatDateTime, formatRelative } from '../format.js';
import { ErrorBox, PagedItems, useAction, usePagedList } from '../ui.js';

/** A user's passkeys on the user page: what they are, when last used, and removal (a lost device). */
export function UserPasskeys(props: { userId: string }) {
  const passkeys = usePagedList((page) => operations.listUserPasskeys({ path: { id: props.userId }, query: page }), [props.userId]);
  const action = useAction();
  const remove = (passkey: Passkey) =>
    void action
      .run(() => operations.deleteUserPasskey({ path: { id: props.userId, passkey_id: passkey.id } }))
      .then((ok) => ok && passkeys.resource.reload());
  return (
    <section className="panel" aria-labelledby="passkeys">
      <h2 id="passkeys">Passkeys</h2>
      <ErrorBox error={action.error} />
      <PagedItems list={passkeys} empty="No passkeys. The user adds them from your application.">
        {(data) => (
          <ul className="rows" data-testid="passkey-list">
            {data.map((passkey) => (
              <li key={passkey.id} className="row">
                <div>
                  <strong>{passkey.name}</strong> <code>{passkey.id}</code>
                  <div className="muted">
                    {passkey.device_type === 'multi_device' ? 'synced' : 'this device only'}
                    {passkey.backed_up ? ' · backed up' : ''} · added {formatDateTime(passkey.created_at)} · last used{' '}
                    {passkey.last_used_at === null ? 'never' : formatRelative(passkey.last_used_at)}
                  </div>
                </div>
                <button
                  type="button"
                  className="danger"
                  aria-label={`Remove passkey ${passkey.name}`}
                  disabled={action.pending}
                  onClick={() => remove(passkey)}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
      </PagedItems>
    </section>
  );
}
