import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventData, type EventType } from '../../server/src/modules/events/event-types.js';
import type { WebhookEvent } from '../src/index.js';

/**
 * The SDK's hand-written event types (webhook-events.ts) against the service's event catalog
 * (packages/server/src/modules/events/event-types.ts), checked by `npm run typecheck`: a type or a
 * data field that one has and the other lacks makes `agrees` below fail to compile.
 */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SdkData<T extends string> = Extract<WebhookEvent, { type: T }>['data'];
type PerType = { [T in EventType]: Mutual<EventData<T>, SdkData<T>> };
type Agrees = Mutual<EventType, WebhookEvent['type']> extends true ? (PerType[EventType] extends true ? true : false) : false;

const agrees: Agrees = true;

describe("the SDK's webhook event types", () => {
  it('name every type of the service catalog, with the same data fields (checked at compile time)', () => {
    expect(agrees).toBe(true);
    expect(EVENT_TYPES.length).toBeGreaterThan(0);
  });
});
