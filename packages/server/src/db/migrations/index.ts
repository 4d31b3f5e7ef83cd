import type { Migration } from 'kysely';
import * as foundation from './0001_foundation.js';

/**
 * Every migration, in order, for both dialects. Add new ones at the end with the next number;
 * never edit one that has shipped.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_foundation': foundation,
};
