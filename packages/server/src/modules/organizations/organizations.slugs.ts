import { isUniqueViolation } from '../../db/transaction.js';
import { ApiError } from '../../lib/errors.js';
import { SLUG_LENGTH_MAX } from './organizations.schemas.js';

/** An organization's slug, unique per project: the one derived from a name, and the refusal of one taken. */

/**
 * The slug a name gives: accents dropped, lower case, every run of other characters one hyphen.
 * A name with no letter or digit in a-z0-9 gives none: 400, pass a `slug`.
 */
export function slugFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, SLUG_LENGTH_MAX)
    .replace(/^-+|-+$/g, '');
  if (slug === '') {
    throw new ApiError(
      'parameter_missing',
      'No slug can be derived from this name; pass a `slug` (lower-case letters, digits and hyphens).',
      {
        param: 'slug',
      },
    );
  }
  return slug;
}

/** Runs a write that sets `slug`, turning the unique index's refusal into 409 `organization_slug_taken`. */
export async function writingSlug<T>(slug: string | undefined, derived: boolean, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (slug === undefined || !isUniqueViolation(error)) throw error;
    const hint = derived ? ' (derived from the name; pass another `slug`)' : '';
    throw new ApiError('organization_slug_taken', `An organization with the slug "${slug}" already exists${hint}.`, { param: 'slug' });
  }
}
