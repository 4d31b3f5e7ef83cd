import type { FastifyRequest } from 'fastify';
import { ApiError } from '../lib/errors.js';

/**
 * Keys that name an object's prototype machinery. JSON.parse makes `{"__proto__": …}` an own
 * property, but any later `Object.assign`, merge or `obj[key] = value` would set the prototype
 * instead (prototype pollution); no field of this API has these names, so they are refused as
 * unknown wherever they appear, nested ones (inside `metadata`) too.
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Text no database here stores faithfully: NUL (PostgreSQL refuses it in text and jsonb) and
 * UTF-16 surrogates without their pair (not Unicode: PostgreSQL refuses them, SQLite would store
 * replacement characters). `String.prototype.isWellFormed` would say the second, from ES2024 on.
 */
// eslint-disable-next-line no-control-regex -- NUL is one of the characters this looks for.
const UNSTORABLE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_TEXT_ALL = new RegExp(UNSTORABLE_TEXT.source, 'g');

/**
 * Checks every text of a request before its schema does (a preValidation hook for every route):
 * the JSON body's strings and keys at any depth, the query string and the path parameters. NUL or
 * a lone surrogate → 400 `parameter_invalid`; a reserved key → 400 `parameter_unknown`; `param`
 * names the field as validation errors do (`metadata.note`, `operations[2].description`).
 */
export function checkRequestText(request: FastifyRequest): void {
  checkText(request.params, '');
  checkText(request.query, '');
  checkText(request.body, '');
}

/** Walks `value` without recursion: a 1 MiB body may nest far deeper than the call stack goes. */
export function checkText(value: unknown, path: string): void {
  const pending: Array<{ value: unknown; path: string }> = [{ value, path }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const current = next.value;
    if (typeof current === 'string') {
      if (UNSTORABLE_TEXT.test(current)) throw unstorable(next.path);
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index -= 1) pending.push({ value: current[index], path: `${next.path}[${index}]` });
    } else if (current !== null && typeof current === 'object') {
      const keys = Object.keys(current);
      for (let index = keys.length - 1; index >= 0; index -= 1) {
        const key = keys[index] as string;
        if (RESERVED_KEYS.has(key)) {
          const param = joinParam(next.path, key);
          throw new ApiError('parameter_unknown', `Unknown parameter: ${param}.`, { param });
        }
        if (UNSTORABLE_TEXT.test(key)) throw unstorable(joinParam(next.path, escapeUnstorable(key)));
        pending.push({ value: (current as Record<string, unknown>)[key], path: joinParam(next.path, key) });
      }
    }
  }
}

function unstorable(param: string): ApiError {
  return new ApiError(
    'parameter_invalid',
    `Invalid parameter ${param === '' ? 'body' : param}: text may not contain NUL characters (\\u0000) or unpaired UTF-16 surrogates.`,
    param === '' ? {} : { param },
  );
}

/** The key as `param` can show it: the offending characters written as `\uXXXX`. */
function escapeUnstorable(key: string): string {
  return key.replace(UNSTORABLE_TEXT_ALL, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function joinParam(base: string, name: string): string {
  return base === '' ? name : `${base}.${name}`;
}
