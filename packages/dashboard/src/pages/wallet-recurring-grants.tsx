import type { RecurringGrant } from '@svc/sdk';
import { operations } from '../api.js';
import { formatCredits, formatDateTime, formatRelative } from '../format.js';
import { ErrorBox, PagedItems, Panel, StatusBadge, Table, useAction, usePagedList } from '../ui.js';

/** "every 2 months", "every day". */
function every(grant: RecurringGrant): string {
  return grant.interval_count === 1 ? `every ${grant.interval}` : `every ${grant.interval_count} ${grant.interval}s`;
}

/**
 * A wallet's recurring grants: allowances credited once per period (docs/api.md, "Recurring
 * grants"), each active one with a Cancel button (no further credits; those made stay).
 */
export function RecurringGrantsPanel(props: { walletId: string; currency: string }) {
  const grants = usePagedList((page) => operations.listRecurringGrants({ path: { id: props.walletId }, query: page }), [props.walletId]);
  const action = useAction();
  const cancel = (grant: RecurringGrant) =>
    void action.run(() => operations.cancelRecurringGrant({ path: { id: grant.id } })).then((ok) => ok && grants.resource.reload());
  return (
    <Panel id="recurring-grants" title="Recurring grants">
      <ErrorBox error={action.error} />
      <PagedItems list={grants} empty="No recurring grants.">
        {(data) => (
          <Table
            caption="Recurring grants, newest first"
            columns={[
              'Recurring grant',
              'Status',
              { number: 'Amount' },
              'Period',
              'Expires',
              'Next credit',
              'Description',
              { hidden: 'Actions' },
            ]}
            testId="recurring-grants"
          >
            {data.map((grant) => (
              <tr key={grant.id}>
                <td>
                  <code>{grant.id}</code>
                </td>
                <td>
                  <StatusBadge status={grant.status} />
                </td>
                <td className="number">
                  {formatCredits(grant.amount)} {props.currency}
                </td>
                <td title={`from ${formatDateTime(grant.starts_at)}`}>{every(grant)}</td>
                <td>{grant.expires === 'never' ? 'never' : 'at period end'}</td>
                <td>
                  {grant.next_grant_at === null ? (
                    '—'
                  ) : (
                    <span title={formatDateTime(grant.next_grant_at)}>{formatRelative(grant.next_grant_at)}</span>
                  )}
                </td>
                <td>{grant.description ?? ''}</td>
                <td>
                  {grant.status === 'active' ? (
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Cancel recurring grant ${grant.id}`}
                      disabled={action.pending}
                      onClick={() => cancel(grant)}
                    >
                      Cancel
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </PagedItems>
    </Panel>
  );
}
