import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';

/**
 * Request and response schemas of the passkey routes (docs/api.md, "Passkeys").
 *
 * The authenticator's response is the browser's document, not ours: `PublicKeyCredential.toJSON()`
 * (or @simplewebauthn/browser's `startRegistration` / `startAuthentication`) as it comes. Its known
 * members are checked for shape and size; members a newer browser adds are let through rather
 * than refused, since the caller cannot remove them.
 */

/** Room for an attestation object with a certificate chain; far above what attestation `none` sends. */
const ENCODED_LENGTH_MAX = 65_536;
const Base64Url = (description: string, maxLength = ENCODED_LENGTH_MAX) =>
  Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+={0,2}$', description });
const CredentialId = Base64Url('The authenticator credential id, base64url.', 1024);
const Transports = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 });
const ClientExtensionResults = Type.Object({}, { additionalProperties: true, description: 'As the browser gives them.' });

const credentialProperties = {
  id: CredentialId,
  rawId: CredentialId,
  type: Type.Literal('public-key'),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  clientExtensionResults: Type.Optional(ClientExtensionResults),
};

export const RegistrationCredential = Type.Object(
  {
    ...credentialProperties,
    response: Type.Object(
      {
        clientDataJSON: Base64Url('The client data, base64url.'),
        attestationObject: Base64Url('The attestation object, base64url.'),
        authenticatorData: Type.Optional(Base64Url('The authenticator data, base64url.')),
        transports: Type.Optional(Transports),
        publicKeyAlgorithm: Type.Optional(Type.Integer()),
        publicKey: Type.Optional(Base64Url('The public key (SPKI), base64url.')),
      },
      { additionalProperties: true },
    ),
  },
  {
    additionalProperties: true,
    description: 'The result of `navigator.credentials.create()` as `PublicKeyCredential.toJSON()` gives it.',
  },
);
export type RegistrationCredential = Static<typeof RegistrationCredential>;

export const AuthenticationCredential = Type.Object(
  {
    ...credentialProperties,
    response: Type.Object(
      {
        clientDataJSON: Base64Url('The client data, base64url.'),
        authenticatorData: Base64Url('The authenticator data, base64url.'),
        signature: Base64Url('The assertion signature, base64url.'),
        userHandle: Type.Optional(Base64Url('The user handle the authenticator keeps, base64url.', 1024)),
      },
      { additionalProperties: true },
    ),
  },
  {
    additionalProperties: true,
    description: 'The result of `navigator.credentials.get()` as `PublicKeyCredential.toJSON()` gives it.',
  },
);
export type AuthenticationCredential = Static<typeof AuthenticationCredential>;

export const PASSKEY_NAME_LENGTH_MAX = 100;

export const RegisterPasskeyBody = StrictObject({
  response: RegistrationCredential,
  name: Type.Optional(
    Type.String({ maxLength: 400, description: `A label for the user, 1 to ${PASSKEY_NAME_LENGTH_MAX} characters; default "Passkey".` }),
  ),
});
export type RegisterPasskeyBody = Static<typeof RegisterPasskeyBody>;

export const SignInOptionsBody = StrictObject({
  email: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 320,
      description: "Whose passkeys may answer. Without it the options allow any of the project's passkeys (discoverable credentials).",
    }),
  ),
});
export type SignInOptionsBody = Static<typeof SignInOptionsBody>;

export const SignInBody = StrictObject({
  challenge_id: Type.String({ minLength: 1, maxLength: 100, description: 'From `POST /v1/auth/passkey/options`, `pkc_…`.' }),
  response: AuthenticationCredential,
});
export type SignInBody = Static<typeof SignInBody>;

export const PasskeySchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `pk_`.' }),
    object: Type.Literal('passkey'),
    user_id: Type.String(),
    name: Type.String(),
    device_type: Type.Union([Type.Literal('single_device'), Type.Literal('multi_device')], {
      description: '`multi_device`: a synced passkey (a platform account keeps it); `single_device`: bound to one authenticator.',
    }),
    backed_up: Type.Boolean({ description: 'Whether the authenticator reports the passkey backed up (synced).' }),
    transports: Type.Array(Type.String(), { description: 'How the authenticator is reached: `internal`, `hybrid`, `usb`, `nfc`, `ble`.' }),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'Passkey' },
);
export type Passkey = Static<typeof PasskeySchema>;

export const PasskeyListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(PasskeySchema), has_more: Type.Boolean() },
  { $id: 'PasskeyList' },
);

export const DeletedPasskeySchema = Type.Object(
  { id: Type.String(), object: Type.Literal('passkey'), deleted: Type.Literal(true) },
  { $id: 'DeletedPasskey' },
);

const CredentialDescriptor = Type.Object({
  id: Type.String({ description: 'A credential id, base64url.' }),
  type: Type.Literal('public-key'),
  transports: Type.Optional(Type.Array(Type.String())),
});
const Loose = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const RegistrationOptionsSchema = Type.Object(
  {
    challenge: Type.String({ description: 'base64url; single use, valid 5 minutes.' }),
    rp: Type.Object({ id: Type.String(), name: Type.String() }),
    user: Type.Object({
      id: Type.String({ description: 'The user handle, base64url of the `usr_` id.' }),
      name: Type.String(),
      displayName: Type.String(),
    }),
    pubKeyCredParams: Type.Array(Type.Object({ type: Type.Literal('public-key'), alg: Type.Integer() })),
    timeout: Type.Optional(Type.Integer({ description: 'Milliseconds.' })),
    excludeCredentials: Type.Optional(Type.Array(CredentialDescriptor, { description: "The user's passkeys already registered." })),
    authenticatorSelection: Type.Optional(Loose('`residentKey: required`, `userVerification: required`.')),
    attestation: Type.Optional(Type.String({ description: '`none`.' })),
    extensions: Type.Optional(Loose('WebAuthn extensions.')),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  {
    $id: 'PasskeyRegistrationOptions',
    additionalProperties: true,
    description: 'For `navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options)})`.',
  },
);

export const SignInOptionsSchema = Type.Object(
  {
    challenge_id: Type.String({ description: '`pkc_…`: send it back with the response to `POST /v1/auth/passkey`.' }),
    challenge: Type.String({ description: 'base64url; single use, valid 5 minutes.' }),
    rpId: Type.String(),
    timeout: Type.Optional(Type.Integer({ description: 'Milliseconds.' })),
    allowCredentials: Type.Optional(
      Type.Array(CredentialDescriptor, { description: "With an email, that user's passkeys; empty: any discoverable passkey." }),
    ),
    userVerification: Type.Optional(Type.String({ description: '`required`.' })),
    extensions: Type.Optional(Loose('WebAuthn extensions.')),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  {
    $id: 'PasskeySignInOptions',
    additionalProperties: true,
    description: 'For `navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)})`.',
  },
);

export const ListPasskeysQuery = StrictObject({ ...ListQuery });
export const PasskeyParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 100 }) });
export const UserPasskeyParams = StrictObject({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  passkey_id: Type.String({ minLength: 1, maxLength: 100 }),
});
export const UserParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 100 }) });
