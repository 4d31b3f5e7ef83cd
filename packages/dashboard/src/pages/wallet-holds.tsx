import { formatAmount, formatCredits, formatDateTime, formatRelative } from '../format.js';
import { operations } from '../api.js';
import { Empty, Loaded, PagedItems, Panel, StatusBadge, Table, usePagedList, useResource } from '../ui.js';

/**
 * A wallet's balance by category: Σ remaining of its unexpired grants of each (docs/api.md,
 * "Categories"); pending holds' reservations are included, as in the balance.
 */
export function CategoriesPanel(props: { walletId: string; currency: string }) {
  const balance = useResource(() => operations.getWalletBalance({ path: { id: props.walletId } }), [props.walletId]);
  return (
    <Panel id="categories" title="Balance by category">
      <Loaded resource={balance}>
        {({ categories = [] }) =>
          categories.length === 0 ? (
            <Empty>No credits left in any category.</Empty>
          ) : (
            <Table caption="Credits left by category, by name" columns={['Category', { number: 'Remaining' }]} testId="wallet-categories">
              {categories.map((row) => (
                <tr key={row.category}>
                  <td>
                    <code>{row.category}</code>
                  </td>
                  <td className="number">{formatAmount(row.remaining, props.currency)}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </Panel>
  );
}

/** A wallet's holds: reserved credits, out of `available` until captured, voided or expired (docs/api.md, "Holds and grants"). */
export function HoldsPanel(props: { walletId: string; currency: string }) {
  const holds = usePagedList((page) => operations.listHolds({ path: { id: props.walletId }, query: page }), [props.walletId]);
  return (
    <Panel id="holds" title="Holds">
      <PagedItems list={holds} empty="No holds.">
        {(data) => (
          <Table
            caption="Holds, newest first"
            columns={['Hold', 'Status', { number: 'Amount' }, { number: 'Captured' }, 'Expires', 'Description']}
            testId="holds"
          >
            {data.map((hold) => (
              <tr key={hold.id}>
                <td>
                  <code>{hold.id}</code>
                </td>
                <td>
                  <StatusBadge status={hold.status} />
                </td>
                <td className="number">{formatAmount(hold.amount, props.currency)}</td>
                <td className="number">{formatCredits(hold.captured_amount)}</td>
                <td title={formatDateTime(hold.expires_at)}>{formatRelative(hold.expires_at)}</td>
                <td>{hold.description ?? ''}</td>
              </tr>
            ))}
          </Table>
        )}
      </PagedItems>
    </Panel>
  );
}

/** A wallet's grants: every credit with its category, priority, expiry and what is left of it. */
export function GrantsPanel(props: { walletId: string; currency: string }) {
  const grants = usePagedList((page) => operations.listGrants({ path: { id: props.walletId }, query: page }), [props.walletId]);
  return (
    <Panel id="grants" title="Grants">
      <PagedItems list={grants} empty="No grants: the wallet was never credited.">
        {(data) => (
          <Table
            caption="Grants, newest first; lower priority is spent first"
            columns={['Grant', 'Status', 'Category', { number: 'Remaining' }, { number: 'Amount' }, { number: 'Priority' }, 'Expires']}
            testId="grants"
          >
            {data.map((grant) => (
              <tr key={grant.id}>
                <td>
                  <code>{grant.id}</code>
                </td>
                <td>
                  <StatusBadge status={grant.status} />
                </td>
                <td>
                  <code>{grant.category}</code>
                </td>
                <td className="number">{formatAmount(grant.remaining, props.currency)}</td>
                <td className="number">{formatCredits(grant.amount)}</td>
                <td className="number">{grant.priority}</td>
                <td>
                  {grant.expires_at === null ? (
                    'never'
                  ) : (
                    <span title={formatDateTime(grant.expires_at)}>{formatRelative(grant.expires_at)}</span>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </PagedItems>
    </Panel>
  );
}
