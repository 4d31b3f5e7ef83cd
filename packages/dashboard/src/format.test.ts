import { describe, expect, it } from 'vitest';
import {
  balanceSeries,
  formatAmount,
  formatCredits,
  formatDateTime,
  formatDelta,
  formatJson,
  formatLatency,
  formatPercent,
  formatRelative,
  jsonTokens,
  parseAmount,
  resultingBalance,
} from './format.js';

describe('amounts', () => {
  it('groups credits by thousands and never rounds', () => {
    expect(formatCredits(0)).toBe('0');
    expect(formatCredits(999)).toBe('999');
    expect(formatCredits(1000)).toBe('1,000');
    expect(formatCredits(1234567)).toBe('1,234,567');
    expect(formatCredits(9_007_199_254_740_991)).toBe('9,007,199,254,740,991');
    expect(formatCredits(-2500)).toBe('−2,500');
    expect(formatDelta(500)).toBe('+500');
    expect(formatDelta(-100)).toBe('−100');
  });

  it('shows an amount as a whole number followed by its unit, an ISO 4217 code or a custom unit alike', () => {
    expect(formatAmount(1500, 'USD')).toBe('1,500 USD');
    expect(formatAmount(20, 'GPU_HOURS')).toBe('20 GPU_HOURS');
    expect(formatAmount(1_000_000, 'CREDITS')).toBe('1,000,000 CREDITS');
  });

  it('reads whole amounts with separators and refuses the rest with a reason', () => {
    expect(parseAmount('1,000')).toEqual({ amount: 1000 });
    expect(parseAmount(' 2_500 ')).toEqual({ amount: 2500 });
    expect(parseAmount('1000000000000')).toEqual({ amount: 1_000_000_000_000 });
    expect(parseAmount('')).toEqual({ error: 'Enter an amount.' });
    expect(parseAmount('1.5')).toHaveProperty('error', 'Credits are whole numbers: digits only.');
    expect(parseAmount('-5')).toHaveProperty('error');
    expect(parseAmount('0')).toHaveProperty('error', 'The amount must be at least 1.');
    expect(parseAmount('1000000000001')).toHaveProperty('error');
  });

  it('computes the resulting balance, or undefined below zero', () => {
    expect(resultingBalance(100, 50, 'add', 0)).toBe(150);
    expect(resultingBalance(100, 100, 'deduct', 0)).toBe(0);
    expect(resultingBalance(100, 101, 'deduct', 0)).toBeUndefined();
    // A credit limit lets the balance go that far below 0, no further.
    expect(resultingBalance(100, 150, 'deduct', 50)).toBe(-50);
    expect(resultingBalance(100, 151, 'deduct', 50)).toBeUndefined();
    expect(resultingBalance(-50, 20, 'add', 50)).toBe(-30);
  });
});

describe('dates', () => {
  it('shows UTC times without locale dependence', () => {
    expect(formatDateTime('2026-11-20T12:00:00.000Z')).toBe('2026-11-20 12:00:00 UTC');
    expect(formatDateTime('2026-01-02T03:04:05.678Z')).toBe('2026-01-02 03:04:05 UTC');
    expect(formatDateTime(null)).toBe('—');
    expect(formatDateTime('not a date')).toBe('not a date');
  });

  it('says how long ago', () => {
    const now = new Date('2026-11-20T12:00:00.000Z');
    expect(formatRelative('2026-11-20T11:59:30.000Z', now)).toBe('just now');
    expect(formatRelative('2026-11-20T11:55:00.000Z', now)).toBe('5 min ago');
    expect(formatRelative('2026-11-20T09:00:00.000Z', now)).toBe('3 h ago');
    expect(formatRelative('2026-11-18T12:00:00.000Z', now)).toBe('2 d ago');
    expect(formatRelative('2026-11-20T16:00:00.000Z', now)).toBe('in 4 h');
  });
});

describe('rates and latency', () => {
  it('formats', () => {
    expect(formatPercent(0.953)).toBe('95.3%');
    expect(formatPercent(1)).toBe('100%');
    expect(formatPercent(null)).toBe('—');
    expect(formatLatency(42.4)).toBe('42 ms');
    expect(formatLatency(1530)).toBe('1.53 s');
    expect(formatLatency(2000)).toBe('2 s');
    expect(formatLatency(null)).toBe('—');
  });
});

describe('JSON', () => {
  it('pretty-prints values and JSON text alike, and leaves other text alone', () => {
    expect(formatJson({ a: 1, b: [true, null] })).toBe('{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}');
    expect(formatJson('{"ok":true}')).toBe('{\n  "ok": true\n}');
    expect(formatJson('plain text')).toBe('plain text');
  });

  it('tokenizes for colouring and loses no character, even of hostile strings', () => {
    const text = formatJson({ type: 'wallet.credit.added', data: { amount: 500, note: '<script>"x"</script>', ok: false } });
    const tokens = jsonTokens(text);
    expect(tokens.map((token) => token.text).join('')).toBe(text);
    expect(tokens).toContainEqual({ kind: 'key', text: '"type"' });
    expect(tokens).toContainEqual({ kind: 'string', text: '"wallet.credit.added"' });
    expect(tokens).toContainEqual({ kind: 'number', text: '500' });
    expect(tokens).toContainEqual({ kind: 'literal', text: 'false' });
    expect(tokens).toContainEqual({ kind: 'string', text: '"<script>\\"x\\"</script>"' });
  });
});

describe('series', () => {
  it('turns a newest-first transaction list into an oldest-first balance series', () => {
    const series = balanceSeries([
      { created_at: '2026-11-20T12:00:02.000Z', balance_after: 400 },
      { created_at: '2026-11-20T12:00:01.000Z', balance_after: 500 },
      { created_at: '2026-11-20T12:00:00.000Z', balance_after: null },
    ]);
    expect(series).toEqual({
      times: [Date.parse('2026-11-20T12:00:01.000Z') / 1000, Date.parse('2026-11-20T12:00:02.000Z') / 1000],
      balances: [500, 400],
    });
  });
});
