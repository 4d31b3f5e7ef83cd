import type { LightMyRequestResponse } from 'fastify';
import type { Service } from '../../main.js';

/** Helpers for the passkey tests: the relying party and the two ceremonies through `app.inject`. */

/** What an authenticator reads of creation options. */
export interface CreationOptions {
  readonly challenge: string;
  readonly rp: { readonly id?: string; readonly name: string };
  readonly user: { readonly id: string; readonly name: string };
}

/** What an authenticator reads of request options. */
export interface RequestOptions {
  readonly challenge: string;
  readonly rpId?: string;
  readonly allowCredentials?: readonly { readonly id: string }[];
}

/** An authenticator that answers creation options (the tests' software one). */
export interface Registering {
  register(options: CreationOptions): { readonly id: string };
}

export const RP_ID = 'example.com';
export const ORIGIN = 'https://app.example.com';
export const RELYING_PARTY = { rp_id: RP_ID, rp_name: 'Example', origins: [ORIGIN, 'https://example.com'] };

export interface PasskeyClient {
  readonly service: Service;
  readonly secretKey: string;
  call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, token?: string): Promise<LightMyRequestResponse>;
}

export function passkeyClient(service: Service, secretKey: string): PasskeyClient {
  return {
    service,
    secretKey,
    call: (method, url, payload, token) =>
      service.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token ?? secretKey}` },
        ...(payload === undefined ? {} : { payload }),
      }),
  };
}

export async function configureRelyingParty(client: PasskeyClient, webauthn: object | null = RELYING_PARTY): Promise<void> {
  const response = await client.call('PATCH', '/v1/project', { webauthn });
  if (response.statusCode !== 200) throw new Error(`PATCH /v1/project failed: ${response.statusCode} ${response.body}`);
}

export async function registrationOptions(client: PasskeyClient, token: string): Promise<CreationOptions> {
  const response = await client.call('POST', '/v1/users/me/passkeys/options', {}, token);
  if (response.statusCode !== 200) throw new Error(`registration options failed: ${response.statusCode} ${response.body}`);
  return response.json<CreationOptions>();
}

/** Registers a new passkey of the session's user on the authenticator; returns its `pk_` id and credential id. */
export async function registerPasskey(
  client: PasskeyClient,
  token: string,
  authenticator: Registering,
  name?: string,
): Promise<{ id: string; credentialId: string }> {
  const credential = authenticator.register(await registrationOptions(client, token));
  const response = await client.call(
    'POST',
    '/v1/users/me/passkeys',
    { response: credential, ...(name === undefined ? {} : { name }) },
    token,
  );
  if (response.statusCode !== 201) throw new Error(`registration failed: ${response.statusCode} ${response.body}`);
  return { id: response.json<{ id: string }>().id, credentialId: credential.id };
}

export async function signInOptions(client: PasskeyClient, email?: string): Promise<RequestOptions & { challenge_id: string }> {
  const response = await client.call('POST', '/v1/auth/passkey/options', email === undefined ? {} : { email });
  if (response.statusCode !== 200) throw new Error(`sign-in options failed: ${response.statusCode} ${response.body}`);
  return response.json<RequestOptions & { challenge_id: string }>();
}
