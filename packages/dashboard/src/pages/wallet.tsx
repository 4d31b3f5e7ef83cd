import { useMemo, useState } from 'react';
import type { WalletTransaction as Transaction } from '@svc/sdk';
import { operations } from '../api.js';
import { Chart, type ChartSeries } from '../chart.js';
import { balanceSeries, formatAmount, formatCredits, formatDateTime, formatDelta, formatRelative } from '../format.js';
import { CategoriesPanel, GrantsPanel, HoldsPanel } from './wallet-holds.js';
import { RecurringGrantsPanel } from './wallet-recurring-grants.js';
import { OPERATION_LABELS, type Operation, OperationDialog, REVERSIBLE, ReverseDialog } from './wallet-dialogs.js';
import { Empty, ErrorBox, Link, Loaded, Page, PagedItems, Panel, StatusBadge, Table, useAction, usePagedList, useResource } from '../ui.js';

export function WalletPage(props: { id: string }) {
  const path = { id: props.id };
  const wallet = useResource(() => operations.getWallet({ path }), [props.id]);
  const history = useResource(() => operations.listWalletTransactions({ path, query: { limit: 100 } }), [props.id]);
  const transactions = usePagedList((page) => operations.listWalletTransactions({ path, query: page }), [props.id]);
  const [operation, setOperation] = useState<Operation | undefined>(undefined);
  const [reversing, setReversing] = useState<Transaction | undefined>(undefined);
  const status = useAction();
  const reload = () => {
    wallet.reload();
    history.reload();
    transactions.resource.reload();
  };
  /** Closes the open dialog; after a change it made (`changed`), reads the wallet anew. */
  const closeDialog = (changed: boolean) => {
    setOperation(undefined);
    setReversing(undefined);
    if (changed) reload();
  };
  return (
    <Page title="Wallet" back={{ to: '/wallets', label: 'Wallets' }}>
      <Loaded resource={wallet}>
        {(data) => (
          <Panel
            id="wallet-title"
            title={
              <>
                <code>{data.id}</code> <StatusBadge status={data.status} />
              </>
            }
          >
            <p className="balance" data-testid="wallet-balance">
              {formatCredits(data.balance)} <span className="muted">{data.currency}</span>
            </p>
            <dl className="facts">
              <dt>Available</dt>
              <dd data-testid="wallet-available">
                {formatAmount(data.available, data.currency)}
                {data.available === data.balance ? null : (
                  <span className="muted"> ({formatCredits(data.balance - data.available)} held)</span>
                )}
              </dd>
              <dt>Credit limit</dt>
              <dd data-testid="wallet-credit-limit">
                {data.credit_limit === 0 ? 'none' : `${formatCredits(data.credit_limit)} ${data.currency}`}
              </dd>
              <dt>Debt</dt>
              <dd data-testid="wallet-debt">
                {formatCredits(data.debt)} {data.currency}
              </dd>
              <dt>User</dt>
              <dd>
                <Link to={`/users/${data.user_id}`}>{data.user_id}</Link>
              </dd>
              <dt>Low-balance alert</dt>
              <dd>{data.low_balance_threshold === null ? 'none' : `below ${formatCredits(data.low_balance_threshold)}`}</dd>
              <dt>Created</dt>
              <dd>{formatDateTime(data.created_at)}</dd>
            </dl>
            <ErrorBox error={status.error} />
            <div className="actions">
              {(['add', 'deduct', 'transfer'] as const).map((kind) => (
                <button key={kind} type="button" disabled={data.status !== 'active'} onClick={() => setOperation(kind)}>
                  {OPERATION_LABELS[kind]}
                </button>
              ))}
              {data.status === 'active' ? (
                <button
                  type="button"
                  className="danger"
                  disabled={status.pending}
                  onClick={() => void status.run(() => operations.freezeWallet({ path })).then(reload)}
                >
                  Freeze
                </button>
              ) : data.status === 'frozen' ? (
                <button
                  type="button"
                  disabled={status.pending}
                  onClick={() => void status.run(() => operations.unfreezeWallet({ path })).then(reload)}
                >
                  Unfreeze
                </button>
              ) : null}
            </div>
            {operation === undefined ? null : (
              <OperationDialog wallet={data} operation={operation} onClose={() => closeDialog(false)} onDone={() => closeDialog(true)} />
            )}
          </Panel>
        )}
      </Loaded>

      <Loaded resource={wallet}>
        {(data) => (
          // Keyed by the balances, so a credit or debit made on this page lists the grants and holds anew.
          <div key={`${data.balance}:${data.available}`}>
            <CategoriesPanel walletId={data.id} currency={data.currency} />
            <HoldsPanel walletId={data.id} currency={data.currency} />
            <GrantsPanel walletId={data.id} currency={data.currency} />
            <RecurringGrantsPanel walletId={data.id} currency={data.currency} />
          </div>
        )}
      </Loaded>

      <Panel id="balance-chart" title="Balance over time">
        <Loaded resource={history}>{({ data }) => <BalanceChart transactions={data} />}</Loaded>
      </Panel>

      <Panel id="transactions" title="Transactions">
        <PagedItems list={transactions} empty="No transactions yet.">
          {(data) => (
            <Table
              caption="Transactions, newest first"
              columns={['When', 'Type', { number: 'Amount' }, { number: 'Balance after' }, 'Description', { hidden: 'Actions' }]}
              testId="transactions"
            >
              {data.map((transaction) => (
                <tr key={`${transaction.id}:${transaction.type}`}>
                  <td title={formatDateTime(transaction.created_at)}>{formatRelative(transaction.created_at)}</td>
                  <td>
                    {transaction.type.replace('_', ' ')}
                    {transaction.counterparty_wallet_id === undefined ? null : (
                      <>
                        {' '}
                        <Link to={`/wallets/${transaction.counterparty_wallet_id}`}>{transaction.counterparty_wallet_id}</Link>
                      </>
                    )}
                    {transaction.repaid > 0 ? <span className="muted"> (repaid {formatCredits(transaction.repaid)} of debt)</span> : null}
                    {transaction.reverses === undefined ? null : (
                      <span className="muted">
                        {' '}
                        of <code>{transaction.reverses}</code>
                      </span>
                    )}
                  </td>
                  <td className="number">
                    {transaction.type === 'reversal'
                      ? formatCredits(transaction.amount)
                      : formatDelta(
                          transaction.type === 'credit' || transaction.type === 'transfer_in' ? transaction.amount : -transaction.amount,
                        )}
                  </td>
                  <td className="number">{transaction.balance_after === null ? '—' : formatCredits(transaction.balance_after)}</td>
                  <td>{transaction.description ?? ''}</td>
                  <td>
                    {REVERSIBLE.has(transaction.type) ? (
                      <button type="button" onClick={() => setReversing(transaction)}>
                        Reverse
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </PagedItems>
        {reversing === undefined ? null : (
          <ReverseDialog transaction={reversing} onClose={() => closeDialog(false)} onDone={() => closeDialog(true)} />
        )}
      </Panel>
    </Page>
  );
}

/** The balance after each transaction, as a step: it holds until the next one. */
function BalanceChart(props: { transactions: readonly Transaction[] }) {
  // Memoized: a new array would make the chart draw itself again on every render of the page.
  const { times, balances, series } = useMemo(() => {
    const { times, balances } = balanceSeries(props.transactions);
    const series: ChartSeries[] = [{ label: 'Balance', values: balances, color: '#1c7ed6', stepped: true }];
    return { times, balances, series };
  }, [props.transactions]);
  const now = balances.at(-1);
  if (now === undefined) return <Empty>No transactions yet: the balance has not moved.</Empty>;
  return (
    <Chart
      testId="chart-balance"
      summary={`Balance over the last ${times.length} transactions, now ${formatCredits(now)}.`}
      x={times}
      xAxis="time"
      series={series}
      legend={(index) => {
        const time = index === null ? undefined : times[index];
        const balance = index === null ? undefined : balances[index];
        if (time === undefined || balance === undefined) return { title: 'Now', values: [formatCredits(now)] };
        return { title: formatDateTime(new Date(time * 1000).toISOString()), values: [formatCredits(balance)] };
      }}
      formatValue={formatCredits}
    />
  );
}
