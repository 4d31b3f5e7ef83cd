import { type ReactNode, useId, useState } from 'react';
import type { Wallet, WalletTransaction as Transaction } from '@svc/sdk';
import { newIdempotencyKey, operations } from '../api.js';
import { formatAmount, formatCredits, parseAmount, resultingBalance } from '../format.js';
import { type Action, Dialog, ErrorBox, useAction } from '../ui.js';

export type Operation = 'add' | 'deduct' | 'transfer';
export const OPERATION_LABELS: Record<Operation, string> = { add: 'Add credits', deduct: 'Deduct credits', transfer: 'Transfer credits' };

/** The rows a reversal can give back (docs/adr/0024-reversals.md): not expiries, not reversals. */
export const REVERSIBLE = new Set<Transaction['type']>(['credit', 'debit', 'transfer_in', 'transfer_out']);

/**
 * Reverses all of a transaction, or an amount of it, in two steps like the other operations: the
 * form, then a confirmation. The Idempotency-Key is made when the dialog opens.
 */
export function ReverseDialog(props: { transaction: Transaction; onClose: () => void; onDone: () => void }) {
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
export function OperationDialog(props: { wallet: Wallet; operation: Operation; onClose: () => void; onDone: () => void }) {
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
