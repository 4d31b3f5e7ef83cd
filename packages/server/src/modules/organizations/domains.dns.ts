import { Resolver } from 'node:dns/promises';

/** What a TXT lookup found: the records' texts, nothing at all, or no answer (timeout, server failure). */
export type TxtAnswer =
  | { readonly kind: 'records'; readonly texts: readonly string[] }
  | { readonly kind: 'none' }
  | { readonly kind: 'failed'; readonly reason: string };

/** Looks up the TXT records of a name. */
export type TxtLookup = (name: string) => Promise<TxtAnswer>;

/** One try waits this long for an answer; two tries in all. */
const TRY_TIMEOUT_MS = 2000;
const TRIES = 2;
/** A bound on the whole lookup, whatever the resolver's retries add up to. */
const LOOKUP_TIMEOUT_MS = 5000;
/** The name does not exist, or has no TXT record: the record is simply not there. */
const ABSENT_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * TXT lookups through `servers` (`DNS_SERVERS`: `ip` or `ip:port`, IPv6 as `[ip]:port`), or the
 * system's resolvers when the list is empty. Each lookup has its own resolver, so cancelling one
 * on its timeout cancels nothing else.
 */
export function dnsTxtLookup(servers: readonly string[]): TxtLookup {
  return async (name) => {
    const resolver = new Resolver({ timeout: TRY_TIMEOUT_MS, tries: TRIES });
    if (servers.length > 0) resolver.setServers([...servers]);
    const timer = setTimeout(() => resolver.cancel(), LOOKUP_TIMEOUT_MS);
    try {
      const records = await resolver.resolveTxt(name);
      // A TXT record may come in several strings of at most 255 bytes: they form one text.
      return { kind: 'records', texts: records.map((chunks) => chunks.join('')) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
      return ABSENT_CODES.has(code) ? { kind: 'none' } : { kind: 'failed', reason: code };
    } finally {
      clearTimeout(timer);
    }
  };
}
