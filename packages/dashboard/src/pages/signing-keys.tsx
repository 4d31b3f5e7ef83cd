import { useState } from 'react';
import type { SigningKey } from '@svc/sdk';
import { operations } from '../api.js';
import { formatDateTime, formatRelative } from '../format.js';
import { CopyButton, Empty, ErrorBox, Loaded, Page, StatusBadge, Table, useAction, useResource } from '../ui.js';

const STATUS_NOTE: Record<SigningKey['status'], string> = {
  signing: 'signs new session JWTs',
  next: 'published, signs after the next rotation',
  retiring: 'signs no more; published until its JWTs have expired',
};

/**
 * The keys that sign the project's session JWTs, as the JWKS publishes them (public halves only:
 * the list never carries private material), and the rotation (docs/adr/0020-session-jwts.md).
 */
export function SigningKeysPage(props: { projectId: string }) {
  const keys = useResource(() => operations.listSigningKeys(), []);
  const [rotated, setRotated] = useState<SigningKey | undefined>(undefined);
  const action = useAction();
  const jwksUrl = `${window.location.origin}/v1/projects/${props.projectId}/jwks.json`;
  return (
    <Page
      title="Signing keys"
      actions={
        <button
          type="button"
          className="danger"
          disabled={action.pending}
          onClick={() => {
            if (
              window.confirm(
                'Rotate the signing key? The next key signs new JWTs at once; JWTs signed so far still verify until they expire.',
              )
            )
              void action.run(async () => setRotated(await operations.rotateSigningKey())).then(keys.reload);
          }}
        >
          Rotate
        </button>
      }
    >
      <p className="muted">
        Back ends verify session JWTs offline against the project&apos;s key set: <code data-testid="jwks-url">{jwksUrl}</code>{' '}
        <CopyButton value={jwksUrl} label="Copy the JWKS address" />
      </p>
      {rotated === undefined ? null : (
        <p role="status">
          Rotated: <code>{rotated.kid}</code> signs from now on.
        </p>
      )}
      <ErrorBox error={action.error} />
      <Loaded resource={keys}>
        {({ data }) =>
          data.length === 0 ? (
            <Empty>No signing keys yet: the project gets its first on its first session.</Empty>
          ) : (
            <Table
              caption="Session JWT signing keys"
              columns={['Key id (kid)', 'Algorithm', 'Status', 'Created']}
              testId="signing-key-list"
            >
              {data.map((key) => (
                <tr key={key.kid} data-testid="signing-key" data-status={key.status}>
                  <td>
                    <code>{key.kid}</code>
                  </td>
                  <td>{key.alg}</td>
                  <td>
                    <StatusBadge status={key.status} /> <span className="muted">{STATUS_NOTE[key.status]}</span>
                  </td>
                  <td title={formatDateTime(key.created_at)}>{formatRelative(key.created_at)}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </Page>
  );
}
