import { type ReactNode, useId, useMemo, useState } from 'react';
import type { Wallet, WalletTransaction as Transaction } from '@svc/sdk';
import { newIdempotencyKey, operations } from '../api.js';
import { Chart, type ChartSeries } from '../chart.js';
import {
  balanceSeries,
  formatAmount,
  formatCredits,
  formatDateTime,
  formatDelta,
  formatRelative,
  parseAmount,
  resultingBalance,
} from '../format.js';
import { navigate } from '../router.js';
import { CategoriesPanel, GrantsPanel, HoldsPanel } from './wallet-holds.js';
import { RecurringGrantsPanel } from './wallet-recurring-grants.js';
import {
  type Action,
  Dialog,
  Empty,
  ErrorBox,
  Link,
  Loaded,
  Page,
  PagedItems,
  present,
  SearchBox,
  StatusBadge,
  Table,
  useAction,
  usePagedList,
  useResource,
} from '../ui.js';

export function WalletsPage() {
  const [userId, setUserId] = useState('');
  const list = usePagedList((page) => operations.listWallets({ query: { ...page, ...present({ user_id: userId }) } }), [userId]);
  return (
    <Page title="Wallets">
      <SearchBox
        label="Search by user id, or open a wallet by its id"
        placeholder="usr_… or wlt_…"
        value={userId}
        onSearch={(value) => (value.startsWith('wlt_') ? navigate(`/wallets/${value}`) : setUserId(value))}
      />
      <PagedItems list={list} empty={userId === '' ? 'No wallets yet.' : `No wallets for ${userId}.`}>
        {(data) => (
          <Table caption="Wallets" columns={['Wallet', { number: 'Balance' }, 'Status', 'User', 'Created']}>
            {data.map((wallet) => (
              <tr key={wallet.id}>
                <td>
                  <Link to={`/wallets/${wallet.id}`}>{wallet.id}</Link>
                </td>
                <td className="number">{formatAmount(wallet.balance, wallet.currency)}</td>
                <td>
                  <StatusBadge status={wallet.status} />
                </td>
                <td>
                  <Link to={`/users/${wallet.user_id}`}>{wallet.user_id}</Link>
                </td>
                <td title={formatDateTime(wallet.created_at)}>{formatRelative(wallet.created_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </PagedItems>
    </Page>
  );
}

type Operation = 'add' | 'deduct' | 'transfer';
const OPERATION_LABELS: Record<Operation, string> = { add: 'Add credits', deduct: 'Deduct credits', transfer: 'Transfer credits' };

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
  return (
    <Page title="Wallet" back={{ to: '/wallets', label: 'Wallets' }}>
      <Loaded resource={wallet}>
        {(data) => (
          <section className="panel" aria-labelledby="wallet-title">
            <h2 id="wallet-title">
              <code>{data.id}</code> <StatusBadge status={data.status} />
            </h2>
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
              <OperationDialog
                wallet={data}
                operation={operation}
                onClose={() => setOperation(undefined)}
                onDone={() => {
                  setOperation(undefined);
                  reload();
                }}
              />
            )}
          </section>
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

      <section className="panel" aria-labelledby="balance-chart">
        <h2 id="balance-chart">Balance over time</h2>
        <Loaded resource={history}>{({ data }) => <BalanceChart transactions={data} />}</Loaded>
      </section>

      <section className="panel" aria-labelledby="transactions">
        <h2 id="transactions">Transactions</h2>
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
          <ReverseDialog
            transaction={reversing}
            onClose={() => setReversing(undefined)}
            onDone={() => {
              setReversing(undefined);
              reload();
            }}
          />
        )}
      </section>
    </Page>
  );
}

/** The rows a reversal can give back (docs/adr/0024-reversals.md): not expiries, not reversals. */
const REVERSIBLE = new Set<Transaction['type']>(['credit', 'debit', 'transfer_in', 'transfer_out']);

/**
 * Reverses all of a transaction, or an amount of it, in two steps like the other operations: the
 * form, then a confirmation. The Idempotency-Key is made when the dialog opens.
 */
function ReverseDialog(props: { transaction: Transaction; onClose: () => void; onDone: () => void }) {
  const [idempotencyKey] = useState(newIdempotencyKey);
  const [amountText, setAmountText] = useState('');
  const [description, setDescription] = useState('');
  const [confirming, setConfirming] = useState<number | 'all' | undefined>(undefined);
  const [formError, setFormError] = useState<string | undefined>(undefined);
  const action = useAction();
  const amountId = useId();

  const submit = () => {
    if (amountText.trim() === '') {
      setFormError(undefined);
      return setConfirming('all');
    }
    const parsed = parseAmount(amountText);
    if ('error' in parsed) return setFormError(parsed.error);
    if (parsed.amount > props.transaction.amount)
      return setFormError(`The transaction moved ${formatCredits(props.transaction.amount)}; no more can be reversed.`);
    setFormError(undefined);
    setConfirming(parsed.amount);
  };

  const confirm = (amount: number | 'all') => {
    const body = {
      ...(amount === 'all' ? {} : { amount }),
      ...(description.trim() === '' ? {} : { description: description.trim() }),
    };
    void action
      .run(() => operations.reverseTransaction({ path: { id: props.transaction.id }, body }, { idempotencyKey }))
      .then((ok) => ok && props.onDone());
  };

  return (
    <ReviewDialog
      title="Reverse a transaction"
      testId="reverse-confirmation"
      fields={
        <>
          <p>
            <code>{props.transaction.id}</code>: {props.transaction.type.replace('_', ' ')} of {formatCredits(props.transaction.amount)}
          </p>
          <label htmlFor={amountId}>Amount (credits; empty: all that is left)</label>
          <input
            id={amountId}
            inputMode="numeric"
            autoComplete="off"
            value={amountText}
            onChange={(event) => setAmountText(event.target.value)}
            autoFocus
          />
        </>
      }
      description={description}
      onDescription={setDescription}
      formError={formError}
      onReview={submit}
      confirming={confirming}
      summary={(amount) => (
        <p>
          Reverse <strong>{amount === 'all' ? 'all that is left' : formatCredits(amount)}</strong> of <code>{props.transaction.id}</code>.
        </p>
      )}
      confirmLabel="Confirm: reverse"
      action={action}
      onConfirm={confirm}
      onBack={() => setConfirming(undefined)}
      onClose={props.onClose}
    />
  );
}

/**
 * Two steps: the form, then a confirmation that repeats the amount and shows the resulting
 * balance. The Idempotency-Key is made when the dialog opens, so pressing Confirm again after a
 * network error cannot apply the operation twice.
 */
function OperationDialog(props: { wallet: Wallet; operation: Operation; onClose: () => void; onDone: () => void }) {
  const [idempotencyKey] = useState(newIdempotencyKey);
  const [amountText, setAmountText] = useState('');
  const [description, setDescription] = useState('');
  const [toWalletId, setToWalletId] = useState('');
  const [confirming, setConfirming] = useState<number | undefined>(undefined);
  const [formError, setFormError] = useState<string | undefined>(undefined);
  const action = useAction();
  const ids = { amount: useId(), to: useId() };
  const direction = props.operation === 'add' ? 'add' : 'deduct';
  const label = OPERATION_LABELS[props.operation];

  const submit = () => {
    const parsed = parseAmount(amountText);
    if ('error' in parsed) return setFormError(parsed.error);
    if (props.operation === 'transfer' && !toWalletId.trim().startsWith('wlt_'))
      return setFormError('Enter the id of the wallet that receives the credits (wlt_…).');
    if (resultingBalance(props.wallet.balance, parsed.amount, direction, props.wallet.credit_limit) === undefined) {
      const limit = props.wallet.credit_limit > 0 ? ` and a credit limit of ${formatCredits(props.wallet.credit_limit)}` : '';
      return setFormError(
        `The wallet holds ${formatAmount(props.wallet.balance, props.wallet.currency)}${limit}; it cannot give ${formatAmount(parsed.amount, props.wallet.currency)}.`,
      );
    }
    setFormError(undefined);
    setConfirming(parsed.amount);
  };

  const confirm = (amount: number) => {
    const body = { amount, ...(description.trim() === '' ? {} : { description: description.trim() }) };
    const path = { id: props.wallet.id };
    const options = { idempotencyKey };
    const call = () =>
      props.operation === 'add'
        ? operations.creditWallet({ path, body }, options)
        : props.operation === 'deduct'
          ? operations.debitWallet({ path, body }, options)
          : operations.transferCredits({ body: { ...body, from_wallet_id: props.wallet.id, to_wallet_id: toWalletId.trim() } }, options);
    void action.run(call).then((ok) => ok && props.onDone());
  };

  return (
    <ReviewDialog
      title={label}
      testId="confirmation"
      fields={
        <>
          <label htmlFor={ids.amount}>Amount (credits)</label>
          <input
            id={ids.amount}
            inputMode="numeric"
            autoComplete="off"
            value={amountText}
            onChange={(event) => setAmountText(event.target.value)}
            required
            autoFocus
          />
          {props.operation === 'transfer' ? (
            <>
              <label htmlFor={ids.to}>To wallet</label>
              <input
                id={ids.to}
                placeholder="wlt_…"
                autoComplete="off"
                value={toWalletId}
                onChange={(event) => setToWalletId(event.target.value)}
                required
              />
            </>
          ) : null}
        </>
      }
      description={description}
      onDescription={setDescription}
      formError={formError}
      onReview={submit}
      confirming={confirming}
      summary={(amount) => (
        <>
          <p>
            {props.operation === 'add' ? 'Add' : props.operation === 'deduct' ? 'Deduct' : 'Transfer'}{' '}
            <strong>{formatCredits(amount)}</strong> {props.wallet.currency} {props.operation === 'add' ? 'to' : 'from'}{' '}
            <code>{props.wallet.id}</code>
            {props.operation === 'transfer' ? (
              <>
                {' '}
                to <code>{toWalletId.trim()}</code>
              </>
            ) : null}
            .
          </p>
          <p>
            Balance: {formatCredits(props.wallet.balance)} →{' '}
            <strong data-testid="resulting-balance">
              {formatCredits(resultingBalance(props.wallet.balance, amount, direction, props.wallet.credit_limit) ?? 0)}
            </strong>{' '}
            {props.wallet.currency}
          </p>
        </>
      )}
      confirmLabel={`Confirm: ${label.toLowerCase()}`}
      action={action}
      onConfirm={confirm}
      onBack={() => setConfirming(undefined)}
      onClose={props.onClose}
    />
  );
}

/**
 * The two steps of an operation's dialog: the form (`fields`, then the description), whose Review
 * checks it and sets `confirming` or a `formError`; then the summary of what will happen, with
 * Confirm and Back.
 */
function ReviewDialog<Value extends number | 'all'>(props: {
  title: string;
  testId: string;
  fields: ReactNode;
  description: string;
  onDescription: (description: string) => void;
  formError: string | undefined;
  onReview: () => void;
  confirming: Value | undefined;
  summary: (confirming: Value) => ReactNode;
  confirmLabel: string;
  action: Action;
  onConfirm: (confirming: Value) => void;
  onBack: () => void;
  onClose: () => void;
}) {
  const { confirming, action } = props;
  const descriptionId = useId();
  return (
    <Dialog title={props.title} open onClose={props.onClose}>
      {confirming === undefined ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            props.onReview();
          }}
        >
          {props.fields}
          <label htmlFor={descriptionId}>Description (optional)</label>
          <input
            id={descriptionId}
            value={props.description}
            maxLength={500}
            onChange={(event) => props.onDescription(event.target.value)}
          />
          {props.formError === undefined ? null : (
            <p className="field-error" role="alert">
              {props.formError}
            </p>
          )}
          <div className="actions">
            <button type="submit" className="primary">
              Review
            </button>
            <button type="button" onClick={props.onClose}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <div data-testid={props.testId}>
          {props.summary(confirming)}
          <ErrorBox error={action.error} />
          <div className="actions">
            <button type="button" className="primary" disabled={action.pending} onClick={() => props.onConfirm(confirming)} autoFocus>
              {action.pending ? 'Working…' : props.confirmLabel}
            </button>
            <button type="button" disabled={action.pending} onClick={props.onBack}>
              Back
            </button>
          </div>
        </div>
      )}
    </Dialog>
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
