/** Pure formatting of what the API returns: integers of credits, ISO times, JSON. No locale surprises. */

/** 1234567 → "1,234,567"; negative numbers keep their sign. Credits are integers; anything else is shown as is. */
export function formatCredits(amount: number): string {
  if (!Number.isSafeInteger(amount)) return String(amount);
  const digits = Math.abs(amount).toString();
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return amount < 0 ? `−${grouped}` : grouped;
}

/**
 * An amount in a wallet's unit: an ISO 4217 code or a custom unit, always a whole number followed
 * by the unit ("1,500 USD", "20 GPU_HOURS"), never formatted as money (no symbol, no decimals).
 */
export function formatAmount(amount: number, unit: string): string {
  return `${formatCredits(amount)} ${unit}`;
}

/** A signed change: "+500", "−100". */
export function formatDelta(amount: number): string {
  return amount > 0 ? `+${formatCredits(amount)}` : formatCredits(amount);
}

const AMOUNT_MAX = 1_000_000_000_000;

/**
 * Reads an amount typed by an operator: digits with optional thousands separators (",", "_", " ").
 * Returns the integer, or an error message for anything else (decimals, signs, 0, too large).
 */
export function parseAmount(text: string): { amount: number } | { error: string } {
  const cleaned = text.trim().replace(/[,_\s]/g, '');
  if (cleaned === '') return { error: 'Enter an amount.' };
  if (!/^\d+$/.test(cleaned)) return { error: 'Credits are whole numbers: digits only.' };
  const amount = Number(cleaned);
  if (amount < 1) return { error: 'The amount must be at least 1.' };
  if (amount > AMOUNT_MAX) return { error: `One operation moves at most ${formatCredits(AMOUNT_MAX)} credits.` };
  return { amount };
}

/**
 * The balance after an operation, as the confirmation shows it; undefined when it would go below
 * −`creditLimit` (0 for a wallet without a credit limit, docs/adr/0023-credit-limits.md).
 */
export function resultingBalance(balance: number, amount: number, direction: 'add' | 'deduct', creditLimit: number): number | undefined {
  const result = direction === 'add' ? balance + amount : balance - amount;
  return result < -creditLimit ? undefined : result;
}

const pad = (value: number) => String(value).padStart(2, '0');

/** "2026-11-20T12:00:00.000Z" → "2026-11-20 12:00:00 UTC"; unparsable text is returned unchanged. */
export function formatDateTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} UTC`;
}

/** How long ago, in the largest whole unit: "just now", "5 min ago", "3 h ago", "2 d ago"; "in 4 h" for the future. */
export function formatRelative(iso: string, now: Date = new Date()): string {
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((now.getTime() - then) / 1000);
  const magnitude = Math.abs(seconds);
  let text: string;
  if (magnitude < 45) return 'just now';
  else if (magnitude < 3600) text = `${Math.round(magnitude / 60)} min`;
  else if (magnitude < 86_400) text = `${Math.round(magnitude / 3600)} h`;
  else text = `${Math.round(magnitude / 86_400)} d`;
  return seconds >= 0 ? `${text} ago` : `in ${text}`;
}

/** 0.953 → "95.3%"; null → "—". */
export function formatPercent(ratio: number | null): string {
  if (ratio === null || !Number.isFinite(ratio)) return '—';
  const percent = Math.round(ratio * 1000) / 10;
  return `${percent}%`;
}

/** 42 → "42 ms", 1530 → "1.53 s". */
export function formatLatency(milliseconds: number | null): string {
  if (milliseconds === null || !Number.isFinite(milliseconds)) return '—';
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  return `${(milliseconds / 1000).toFixed(2).replace(/\.?0+$/, '')} s`;
}

/** Pretty JSON, two spaces; text that is itself JSON is parsed first, so a response body reads as well as an event. */
export function formatJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

export type JsonTokenKind = 'key' | 'string' | 'number' | 'literal' | 'punctuation' | 'text';
export interface JsonToken {
  readonly kind: JsonTokenKind;
  readonly text: string;
}

/**
 * Splits pretty JSON into tokens for colouring, without ever producing HTML: the view renders each
 * token as text, so a hostile string in an event cannot become markup.
 */
export function jsonTokens(text: string): JsonToken[] {
  const tokens: JsonToken[] = [];
  const pattern = /("(?:\\.|[^"\\])*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b|([{}[\],:])|(\s+)|(.)/g;
  for (const match of text.matchAll(pattern)) {
    const [, string, colon, number, literal, punctuation, space, other] = match;
    if (string !== undefined) {
      tokens.push({ kind: colon === undefined ? 'string' : 'key', text: string });
      if (colon !== undefined) tokens.push({ kind: 'punctuation', text: colon });
    } else if (number !== undefined) tokens.push({ kind: 'number', text: number });
    else if (literal !== undefined) tokens.push({ kind: 'literal', text: literal });
    else if (punctuation !== undefined) tokens.push({ kind: 'punctuation', text: punctuation });
    else tokens.push({ kind: 'text', text: space ?? other ?? '' });
  }
  return tokens;
}

/** The balance of a wallet over time from its transactions (newest first, as the API lists them): oldest first, for a chart. */
export function balanceSeries(transactions: readonly { created_at: string; balance_after?: number | null }[]): {
  times: number[];
  balances: number[];
} {
  const points = transactions
    .filter((transaction): transaction is { created_at: string; balance_after: number } => typeof transaction.balance_after === 'number')
    .map((transaction) => ({ time: Date.parse(transaction.created_at) / 1000, balance: transaction.balance_after }))
    .filter((point) => Number.isFinite(point.time))
    .reverse();
  return { times: points.map((point) => point.time), balances: points.map((point) => point.balance) };
}
