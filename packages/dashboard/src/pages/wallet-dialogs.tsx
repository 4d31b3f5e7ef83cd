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
 * form, then a confirmation.
 */
export function ReverseDialog(props: { transaction: Transaction; onClose: () => void; onDone: () => void }) {
  const [amountText, setAmountText] = useState('');
  const review = useReview<number | 'all'>();

  const submit = () => {
    if (amountText.trim() === '') return review.show('all');
    const parsed = parseAmount(amountText);
    if ('error' in parsed) return review.refuse(parsed.error);
    if (parsed.amount > props.transaction.amount)
      return review.refuse(`The transaction moved ${formatCredits(props.transaction.amount)}; no more can be reversed.`);
    review.show(parsed.amount);
  };

  const confirm = (amount: number | 'all') => {
    const body = { ...(amount === 'all' ? {} : { amount }), ...review.described };
    review.run((options) => operations.reverseTransaction({ path: { id: props.transaction.id }, body }, options), props.onDone);
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
          <AmountField label="Amount (credits; empty: all that is left)" value={amountText} onChange={setAmountText} />
        </>
      }
      review={review}
      onReview={submit}
      summary={(amount) => (
        <p>
          Reverse <strong>{amount === 'all' ? 'all that is left' : formatCredits(amount)}</strong> of <code>{props.transaction.id}</code>.
        </p>
      )}
      confirmLabel="Confirm: reverse"
      onConfirm={confirm}
      onClose={props.onClose}
    />
  );
}

/**
 * Two steps: the form, then a confirmation that repeats the amount and shows the resulting
 * balance.
 */
export function OperationDialog(props: { wallet: Wallet; operation: Operation; onClose: () => void; onDone: () => void }) {
  const [amountText, setAmountText] = useState('');
  const [toWalletId, setToWalletId] = useState('');
  const review = useReview<number>();
  const toId = useId();
  const direction = props.operation === 'add' ? 'add' : 'deduct';
  const label = OPERATION_LABELS[props.operation];

  const submit = () => {
    const parsed = parseAmount(amountText);
    if ('error' in parsed) return review.refuse(parsed.error);
    if (props.operation === 'transfer' && !toWalletId.trim().startsWith('wlt_'))
      return review.refuse('Enter the id of the wallet that receives the credits (wlt_…).');
    if (resultingBalance(props.wallet.balance, parsed.amount, direction, props.wallet.credit_limit) === undefined) {
      const limit = props.wallet.credit_limit > 0 ? ` and a credit limit of ${formatCredits(props.wallet.credit_limit)}` : '';
      return review.refuse(
        `The wallet holds ${formatAmount(props.wallet.balance, props.wallet.currency)}${limit}; it cannot give ${formatAmount(parsed.amount, props.wallet.currency)}.`,
      );
    }
    review.show(parsed.amount);
  };

  const confirm = (amount: number) => {
    const body = { amount, ...review.described };
    const path = { id: props.wallet.id };
    review.run(
      (options) =>
        props.operation === 'add'
          ? operations.creditWallet({ path, body }, options)
          : props.operation === 'deduct'
            ? operations.debitWallet({ path, body }, options)
            : operations.transferCredits({ body: { ...body, from_wallet_id: props.wallet.id, to_wallet_id: toWalletId.trim() } }, options),
      props.onDone,
    );
  };

  return (
    <ReviewDialog
      title={label}
      testId="confirmation"
      fields={
        <>
          <AmountField label="Amount (credits)" value={amountText} onChange={setAmountText} required />
          {props.operation === 'transfer' ? (
            <>
              <label htmlFor={toId}>To wallet</label>
              <input
                id={toId}
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
      review={review}
      onReview={submit}
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
      onConfirm={confirm}
      onClose={props.onClose}
    />
  );
}

/** The amount of credits an operation moves, as typed: focused when the dialog opens. */
function AmountField(props: { label: string; value: string; onChange: (text: string) => void; required?: boolean }) {
  const id = useId();
  return (
    <>
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        inputMode="numeric"
        autoComplete="off"
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
        required={props.required}
        autoFocus
      />
    </>
  );
}

/**
 * The state of an operation's dialog (`useReview`): its description, the value under review or the
 * form's error, and the action, whose Idempotency-Key is made when the dialog opens, so pressing
 * Confirm again after a network error cannot apply the operation twice.
 */
interface Review<Value> {
  readonly description: string;
  readonly setDescription: (description: string) => void;
  readonly formError: string | undefined;
  readonly confirming: Value | undefined;
  /** Leaves the form for the confirmation of `value`. */
  readonly show: (value: Value) => void;
  /** Stays on the form, saying why. */
  readonly refuse: (formError: string) => void;
  /** Goes back from the confirmation to the form. */
  readonly back: () => void;
  /** The description as a body takes it: none when it is empty. */
  readonly described: { description?: string };
  readonly action: Action;
  /** Runs `call` with the dialog's Idempotency-Key, then `done` if it succeeded. */
  readonly run: (call: (options: { idempotencyKey: string }) => Promise<unknown>, done: () => void) => void;
}

function useReview<Value extends number | 'all'>(): Review<Value> {
  const [idempotencyKey] = useState(newIdempotencyKey);
  const [description, setDescription] = useState('');
  const [confirming, setConfirming] = useState<Value | undefined>(undefined);
  const [formError, setFormError] = useState<string | undefined>(undefined);
  const action = useAction();
  const trimmed = description.trim();
  return {
    description,
    setDescription,
    formError,
    confirming,
    show: (value) => {
      setFormError(undefined);
      setConfirming(value);
    },
    refuse: setFormError,
    back: () => setConfirming(undefined),
    described: trimmed === '' ? {} : { description: trimmed },
    action,
    run: (call, done) => void action.run(() => call({ idempotencyKey })).then((ok) => ok && done()),
  };
}

/**
 * The two steps of an operation's dialog: the form (`fields`, then the description), whose Review
 * checks it (`onReview`) and shows the confirmation or refuses; then the summary of what will
 * happen, with Confirm and Back.
 */
function ReviewDialog<Value extends number | 'all'>(props: {
  title: string;
  testId: string;
  fields: ReactNode;
  review: Review<Value>;
  onReview: () => void;
  summary: (confirming: Value) => ReactNode;
  confirmLabel: string;
  onConfirm: (confirming: Value) => void;
  onClose: () => void;
}) {
  const { confirming, action } = props.review;
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
            value={props.review.description}
            maxLength={500}
            onChange={(event) => props.review.setDescription(event.target.value)}
          />
          {props.review.formError === undefined ? null : (
            <p className="field-error" role="alert">
              {props.review.formError}
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
            <button type="button" disabled={action.pending} onClick={props.review.back}>
              Back
            </button>
          </div>
        </div>
      )}
    </Dialog>
  );
}
