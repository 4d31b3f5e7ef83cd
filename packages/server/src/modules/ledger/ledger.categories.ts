import { type Static, Type } from '@sinclair/typebox';

/**
 * Categories of credits (docs/adr/0021-categories.md): a credit names one (default `default`), its
 * grant keeps it, and a debit, hold or transfer may draw only on grants of some of them.
 */

export const CATEGORY_DEFAULT = 'default';
export const CATEGORY_PATTERN = '^[a-z][a-z0-9_]{0,39}$';
/** A restricted movement names at most this many categories. */
export const CATEGORIES_MAX = 10;

export const CategorySchema = Type.String({
  pattern: CATEGORY_PATTERN,
  description: 'A lower-case name of 1 to 40 letters, digits and `_`, starting with a letter, e.g. `paid` or `promotional`.',
});

export const CategoriesSchema = Type.Array(CategorySchema, {
  minItems: 1,
  maxItems: CATEGORIES_MAX,
  uniqueItems: true,
  description: `Draw only on grants of these categories (1 to ${CATEGORIES_MAX}, each once); refused with \`insufficient_credits\` when they do not make the amount available. Default: every category.`,
});

/** A wallet's credits of one category: Σ `remaining` of its unexpired grants of it (pending holds' reservations included). */
export const CategoryBalanceSchema = Type.Object({ category: Type.String(), remaining: Type.Integer({ minimum: 0 }) });
export type CategoryBalance = Static<typeof CategoryBalanceSchema>;

/** A movement's restriction as stored (`ledger_transactions.categories`, `wallet_holds.categories`): JSON, or null for none. */
export function categoriesColumn(categories: readonly string[] | null): string | null {
  return categories === null ? null : JSON.stringify(categories);
}

export function parseCategories(text: string | null): string[] | null {
  return text === null ? null : (JSON.parse(text) as string[]);
}
