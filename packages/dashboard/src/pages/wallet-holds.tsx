import { formatAmount, formatCredits, formatDateTime, formatRelative } from '../format.js';
import { operations } from '../api.js';
import { Empty, Loaded, Pager, StatusBadge, usePagedList, useResource } from '../ui.js';

/**
 * A wallet's balance by category: Σ remaining of its unexpired grants of each (docs/api.md,
 * "Categories"); pending holds' reservations are included, as in the balance.
 */
export function CategoriesPanel(props: { walletId: string; currency: string }) {
  const balance = useResource(() => operations.getWalletBalance({ path: { id: props.walletId } }), [props.walletId]);
  return (
    <section className="panel" aria-labelledby="categories">
      <h2 id="categories">Balance by category</h2>
      <Loaded resource={balance}>
        {({ categories = [] }) =>
          categories.length === 0 ? (
            <Empty>No credits left in any category.</Empty>
          ) : (
            <div className="table-wrap">
              <table data-testid="wallet-categories">
                <caption className="visually-hidden">Credits left by category, by name</caption>
                <thead>
                  <tr>
                    <th scope="col">Category</th>
                    <th scope="col" className="number">
                      Remaining
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {categories.map((row) => (
                    <tr key={row.category}>
                      <td>
                        <code>{row.category}</code>
                      </td>
                      <td className="number">{formatAmount(row.remaining, props.currency)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </section>
  );
}

/** A wallet's holds: reserved credits, out of `available` until captured, voided or expired (docs/api.md, "Holds and grants"). */
export function HoldsPanel(props: { walletId: string; currency: string }) {
  const holds = usePagedList((page) => operations.listHolds({ path: { id: props.walletId }, query: page }), [props.walletId]);
  return (
    <section className="panel" aria-labelledby="holds">
      <h2 id="holds">Holds</h2>
      <Loaded resource={holds.resource}>
        {({ data }) =>
          data.length === 0 ? (
            <Empty>No holds.</Empty>
          ) : (
            <div className="table-wrap">
              <table data-testid="holds">
                <caption className="visually-hidden">Holds, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Hold</th>
                    <th scope="col">Status</th>
                    <th scope="col" className="number">
                      Amount
                    </th>
                    <th scope="col" className="number">
                      Captured
                    </th>
                    <th scope="col">Expires</th>
                    <th scope="col">Description</th>
                  </tr>
                </thead>
                <tbody>
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
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
      <Pager {...holds} />
    </section>
  );
}

/** A wallet's grants: every credit with its category, priority, expiry and what is left of it. */
export function GrantsPanel(props: { walletId: string; currency: string }) {
  const grants = usePagedList((page) => operations.listGrants({ path: { id: props.walletId }, query: page }), [props.walletId]);
  return (
    <section className="panel" aria-labelledby="grants">
      <h2 id="grants">Grants</h2>
      <Loaded resource={grants.resource}>
        {({ data }) =>
          data.length === 0 ? (
            <Empty>No grants: the wallet was never credited.</Empty>
          ) : (
            <div className="table-wrap">
              <table data-testid="grants">
                <caption className="visually-hidden">Grants, newest first; lower priority is spent first</caption>
                <thead>
                  <tr>
                    <th scope="col">Grant</th>
                    <th scope="col">Status</th>
                    <th scope="col">Category</th>
                    <th scope="col" className="number">
                      Remaining
                    </th>
                    <th scope="col" className="number">
                      Amount
                    </th>
                    <th scope="col" className="number">
                      Priority
                    </th>
                    <th scope="col">Expires</th>
                  </tr>
                </thead>
                <tbody>
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
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
      <Pager {...grants} />
    </section>
  );
}
