import { type Api, byId } from '../api.js';
import type { PagedList } from '../pagination.js';
import type { RequestOptions } from '../transport.js';
import type {
  AddCreditsParams,
  Balance,
  CaptureHoldParams,
  CreateHoldParams,
  CreateRecurringGrantParams,
  Grant,
  Hold,
  ListGrantsParams,
  ListHoldsParams,
  ListRecurringGrantsParams,
  RecurringGrant,
  ReverseTransactionParams,
  CreateWalletParams,
  DeductCreditsParams,
  ListWalletsParams,
  ListWalletTransactionsParams,
  Transaction,
  Transfer,
  TransferParams,
  UpdateWalletParams,
  Wallet,
  WalletTransaction,
} from '../types.js';

/** `/v1/wallets`, `/v1/transactions`: wallets and their double-entry ledger. Secret key. */
export class Wallets {
  readonly #api: Api;
  constructor(api: Api) {
    this.#api = api;
  }

  /** `POST /v1/wallets` → 201 wallet with balance 0; `credit_limit` (default 0) lets it go that far below 0. */
  create(params: CreateWalletParams, options?: RequestOptions): Promise<Wallet> {
    return this.#api.call('POST /v1/wallets', { body: params }, options);
  }

  get(id: string, options?: RequestOptions): Promise<Wallet> {
    return this.#api.call('GET /v1/wallets/{id}', { path: { id } }, options);
  }

  /** Newest first; `user_id` narrows to one user's wallets. */
  list(params: ListWalletsParams = {}, options?: RequestOptions): PagedList<Wallet> {
    return this.#api.list('GET /v1/wallets', { query: params }, options, byId);
  }

  /**
   * `metadata`, `low_balance_threshold` and `credit_limit`; a limit below what the wallet owes (its
   * `debt` and what holds reserved on the limit) → 422 `credit_limit_below_debt`, nothing changes.
   */
  update(id: string, params: UpdateWalletParams, options?: RequestOptions): Promise<Wallet> {
    return this.#api.call('PATCH /v1/wallets/{id}', { path: { id }, body: params }, options);
  }

  /** A frozen wallet refuses credits, debits and transfers (409 `wallet_frozen`). */
  freeze(id: string, options?: RequestOptions): Promise<Wallet> {
    return this.#api.call('POST /v1/wallets/{id}/freeze', { path: { id } }, options);
  }

  unfreeze(id: string, options?: RequestOptions): Promise<Wallet> {
    return this.#api.call('POST /v1/wallets/{id}/unfreeze', { path: { id } }, options);
  }

  /** Final; only at balance 0 (409 `wallet_not_empty` otherwise). */
  close(id: string, options?: RequestOptions): Promise<Wallet> {
    return this.#api.call('POST /v1/wallets/{id}/close', { path: { id } }, options);
  }

  /**
   * `POST /v1/wallets/{id}/credits`. `idempotency_key` (or `options.idempotencyKey`) makes a repeat
   * return the first answer instead of adding again; without one, the SDK makes one per call, so
   * its own retries never add twice.
   */
  addCredits(id: string, params: AddCreditsParams, options?: RequestOptions): Promise<Transaction> {
    return this.#api.call('POST /v1/wallets/{id}/credits', { path: { id }, body: params }, options);
  }

  /**
   * `POST /v1/wallets/{id}/debits`; taking `available` below −`credit_limit` → 422
   * `insufficient_credits`, nothing changes. What the grants do not cover becomes `debt`.
   */
  deductCredits(id: string, params: DeductCreditsParams, options?: RequestOptions): Promise<Transaction> {
    return this.#api.call('POST /v1/wallets/{id}/debits', { path: { id }, body: params }, options);
  }

  /**
   * `{ credits, currency, available, debt, credit_limit }`: `available` is the balance less pending
   * holds; both go down to −`credit_limit`.
   */
  getBalance(id: string, options?: RequestOptions): Promise<Balance> {
    return this.#api.call('GET /v1/wallets/{id}/balance', { path: { id } }, options);
  }

  /** `GET /v1/wallets/{id}/balance?at=`: `{ credits, currency, at }` after every movement made at or before `at` (a past time). */
  getBalanceAt(id: string, at: Date | string, options?: RequestOptions): Promise<Balance> {
    const query = { at: at instanceof Date ? at.toISOString() : at };
    return this.#api.call('GET /v1/wallets/{id}/balance', { path: { id }, query }, options);
  }

  /** `POST /v1/wallets/transfer` → 201 transfer with status `completed`. */
  transfer(params: TransferParams, options?: RequestOptions): Promise<Transfer> {
    return this.#api.call('POST /v1/wallets/transfer', { body: params }, options);
  }

  /** The wallet's ledger, newest first; transfers appear as `transfer_out` / `transfer_in`. */
  transactions(id: string, params: ListWalletTransactionsParams = {}, options?: RequestOptions): PagedList<WalletTransaction> {
    return this.#api.list('GET /v1/wallets/{id}/transactions', { path: { id }, query: params }, options, byId);
  }

  /**
   * `POST /v1/wallets/{id}/holds` → 201 hold `pending`: the credits leave `available` (not the
   * balance) until captured, voided or expired; more than `available` → 422 `insufficient_credits`.
   */
  createHold(id: string, params: CreateHoldParams, options?: RequestOptions): Promise<Hold> {
    return this.#api.call('POST /v1/wallets/{id}/holds', { path: { id }, body: params }, options);
  }

  /** `POST /v1/holds/{id}/capture`: debits `amount` (default all) and releases the rest; not pending → 409 `hold_not_pending`. */
  captureHold(holdId: string, params: CaptureHoldParams = {}, options?: RequestOptions): Promise<Hold> {
    return this.#api.call('POST /v1/holds/{id}/capture', { path: { id: holdId }, body: params }, options);
  }

  /** `POST /v1/holds/{id}/void`: releases a pending hold. */
  voidHold(holdId: string, options?: RequestOptions): Promise<Hold> {
    return this.#api.call('POST /v1/holds/{id}/void', { path: { id: holdId } }, options);
  }

  getHold(holdId: string, options?: RequestOptions): Promise<Hold> {
    return this.#api.call('GET /v1/holds/{id}', { path: { id: holdId } }, options);
  }

  /** A wallet's holds, newest first; `status` narrows to `pending`, `captured`, `voided` or `expired`. */
  holds(id: string, params: ListHoldsParams = {}, options?: RequestOptions): PagedList<Hold> {
    return this.#api.list('GET /v1/wallets/{id}/holds', { path: { id }, query: params }, options, byId);
  }

  /** A wallet's grants (every credit, with its priority, expiry and what is left), newest first. */
  grants(id: string, params: ListGrantsParams = {}, options?: RequestOptions): PagedList<Grant> {
    return this.#api.list('GET /v1/wallets/{id}/grants', { path: { id }, query: params }, options, byId);
  }

  /**
   * `POST /v1/wallets/{id}/recurring-grants` → 201 recurring grant `active`: one credit of `amount`
   * per period from `starts_at` (default now), expiring at the period's end unless `expires: "never"`.
   */
  createRecurringGrant(id: string, params: CreateRecurringGrantParams, options?: RequestOptions): Promise<RecurringGrant> {
    return this.#api.call('POST /v1/wallets/{id}/recurring-grants', { path: { id }, body: params }, options);
  }

  /** A wallet's recurring grants, newest first. */
  recurringGrants(id: string, params: ListRecurringGrantsParams = {}, options?: RequestOptions): PagedList<RecurringGrant> {
    return this.#api.list('GET /v1/wallets/{id}/recurring-grants', { path: { id }, query: params }, options, byId);
  }

  getRecurringGrant(recurringGrantId: string, options?: RequestOptions): Promise<RecurringGrant> {
    return this.#api.call('GET /v1/recurring-grants/{id}', { path: { id: recurringGrantId } }, options);
  }

  /** `DELETE /v1/recurring-grants/{id}` → the grant `cancelled`: no further credits; those made stay. */
  cancelRecurringGrant(recurringGrantId: string, options?: RequestOptions): Promise<RecurringGrant> {
    return this.#api.call('DELETE /v1/recurring-grants/{id}', { path: { id: recurringGrantId } }, options);
  }

  /** `GET /v1/transactions/{id}`: a credit, a debit (`object: "transaction"`) or a transfer (`object: "transfer"`). */
  getTransaction(id: string, options?: RequestOptions): Promise<Transaction | Transfer> {
    return this.#api.call('GET /v1/transactions/{id}', { path: { id } }, options);
  }

  /**
   * `POST /v1/transactions/{id}/reverse` → 201 transaction of type `reversal`: gives back `amount`
   * (default all that is left) of a credit, debit or transfer; more than is left → 422
   * `reversal_exceeds_original`, an expiry or reversal → 422 `transaction_not_reversible`.
   */
  reverseTransaction(id: string, params: ReverseTransactionParams = {}, options?: RequestOptions): Promise<Transaction> {
    return this.#api.call('POST /v1/transactions/{id}/reverse', { path: { id }, body: params }, options);
  }
}
