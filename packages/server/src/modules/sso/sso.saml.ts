import { X509Certificate } from 'node:crypto';
import { SAML, type SamlConfig, ValidateInResponseTo } from '@node-saml/node-saml';
import { DOMParser } from '@xmldom/xmldom';
import { ApiError, type ErrorCode } from '../../lib/errors.js';

/**
 * The SAML 2.0 service provider side of a connection, through @node-saml/node-saml: the
 * AuthnRequest (HTTP-Redirect binding), the SP metadata, and the checks of a response that came
 * back through the HTTP-POST binding. Nothing here touches the database: the caller stores the
 * request ids and the used assertion ids (docs/adr/0011-sso.md).
 *
 * node-saml verifies the signature first, with the connection's configured certificate only (never
 * one the message carries), on the response or on the one assertion, and reads the assertion out of
 * what the signature covered (so a wrapped copy is never read); then the time window and the
 * audience. This module then checks, on that signed assertion, what node-saml leaves to its
 * caller: the issuer, the Recipient, the response's Destination, and reads InResponseTo, the
 * assertion id and its expiry for the single-use checks.
 */

/** Clock skew accepted on NotBefore / NotOnOrAfter. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** A base64 SAMLResponse larger than this is refused before it is decoded. */
export const SAML_RESPONSE_BYTES_MAX = 256 * 1024;
const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const EMAIL_NAME_ID_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
/** Attribute names that carry the address, in order of preference. */
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
];
const NAME_ATTRIBUTES = [
  'name',
  'displayName',
  'urn:oid:2.16.840.1.113730.3.1.241',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
];

export interface SamlConnectionSettings {
  readonly idpEntityId: string;
  readonly idpSsoUrl: string;
  /** PEM. */
  readonly idpCertificate: string;
  /** This service's entity id for the connection: its metadata URL. */
  readonly spEntityId: string;
  readonly acsUrl: string;
}

/** What a verified response says; every value comes from signed XML except `destination`'s check. */
export interface SamlAssertion {
  readonly assertionId: string;
  /** The latest NotOnOrAfter of the assertion (Conditions, SubjectConfirmationData): how long its id is kept. */
  readonly expiresAt: Date;
  /** The request it answers; undefined for an IdP-initiated sign-in. */
  readonly inResponseTo: string | undefined;
  readonly subject: string;
  readonly email: string | undefined;
  readonly name: string | undefined;
}

/** The PEM of a certificate given as PEM or bare base64 DER; undefined when it is not a certificate. */
export function normalizeCertificate(raw: string): string | undefined {
  const body = raw.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+=*$/.test(body)) return undefined;
  try {
    const certificate = new X509Certificate(Buffer.from(body, 'base64'));
    return certificate.toString();
  } catch {
    return undefined;
  }
}

function samlFor(settings: SamlConnectionSettings, requestId?: string): SAML {
  const config: SamlConfig = {
    callbackUrl: settings.acsUrl,
    entryPoint: settings.idpSsoUrl,
    issuer: settings.spEntityId,
    audience: settings.spEntityId,
    idpCert: settings.idpCertificate,
    idpIssuer: settings.idpEntityId,
    // Either signature will do, but one of them must verify: with both false, node-saml requires
    // the assertion's signature whenever the response's does not verify.
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    // InResponseTo is checked by the caller against its stored requests, on the signed assertion.
    validateInResponseTo: ValidateInResponseTo.never,
    identifierFormat: EMAIL_NAME_ID_FORMAT,
    disableRequestedAuthnContext: true,
    ...(requestId === undefined ? {} : { generateUniqueId: () => requestId }),
  };
  return new SAML(config);
}

/** The SP metadata document the identity provider's administrator imports. */
export function serviceProviderMetadata(settings: SamlConnectionSettings): string {
  return samlFor(settings).generateServiceProviderMetadata(null, null);
}

/** The identity provider's URL with a deflated AuthnRequest of id `requestId` (HTTP-Redirect binding). */
export async function authnRequestUrl(settings: SamlConnectionSettings, requestId: string): Promise<string> {
  return samlFor(settings, requestId).getAuthorizeUrlAsync('', undefined, {});
}

/**
 * Verifies a base64 SAMLResponse for the connection and returns what its signed assertion says.
 * Every refusal is an ApiError from the catalog: `sso_signature_invalid` (unsigned, another key,
 * wrapping, several assertions), `sso_assertion_expired`, `sso_audience_mismatch`,
 * `sso_destination_mismatch`, `sso_response_invalid`.
 */
export async function verifySamlResponse(settings: SamlConnectionSettings, samlResponse: string): Promise<SamlAssertion> {
  if (samlResponse.length > SAML_RESPONSE_BYTES_MAX) {
    throw new ApiError('sso_response_invalid', `The SAMLResponse is larger than ${SAML_RESPONSE_BYTES_MAX} bytes.`, {
      param: 'SAMLResponse',
    });
  }
  let profile;
  try {
    ({ profile } = await samlFor(settings).validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (error) {
    throw refusalOf(error);
  }
  if (profile === null) throw new ApiError('sso_response_invalid', 'The SAML response carries no assertion.');
  // From here on only the signed assertion is read (node-saml took it out of the signed XML).
  const assertion = parseRoot(profile.getAssertionXml?.() ?? '', 'Assertion');
  if (assertion === undefined) throw new ApiError('sso_response_invalid', 'The signed assertion could not be read.');
  const issuer = childText(assertion, ASSERTION_NS, 'Issuer');
  if (issuer !== settings.idpEntityId) {
    throw new ApiError(
      'sso_response_invalid',
      `The assertion's issuer is not the connection's identity provider (${settings.idpEntityId}).`,
    );
  }
  const confirmations = elements(assertion, ASSERTION_NS, 'SubjectConfirmationData');
  if (confirmations.length === 0) throw new ApiError('sso_response_invalid', 'The assertion has no SubjectConfirmationData.');
  for (const data of confirmations) {
    if (data.getAttribute('Recipient') !== settings.acsUrl) {
      throw new ApiError('sso_destination_mismatch', `The assertion's Recipient is not this connection's ACS URL (${settings.acsUrl}).`);
    }
  }
  // The response's Destination: signed when the response is, and required by SAML then; checked
  // whenever it is present.
  const response = parseRoot(profile.getSamlResponseXml?.() ?? '', 'Response');
  const destination = response?.getAttribute('Destination') ?? '';
  if (destination !== '' && destination !== settings.acsUrl) {
    throw new ApiError('sso_destination_mismatch', `The response's Destination is not this connection's ACS URL (${settings.acsUrl}).`);
  }
  const inResponseTo = confirmations[0]?.getAttribute('InResponseTo') ?? '';
  const responseInResponseTo = response?.getAttribute('InResponseTo') ?? '';
  if (responseInResponseTo !== '' && responseInResponseTo !== inResponseTo) {
    throw new ApiError('sso_request_invalid', "The response's InResponseTo differs from its signed assertion's.");
  }
  const assertionId = assertion.getAttribute('ID') ?? '';
  if (assertionId === '') throw new ApiError('sso_response_invalid', 'The assertion has no ID.');
  const expiries = [...elements(assertion, ASSERTION_NS, 'Conditions'), ...confirmations]
    .map((element) => element.getAttribute('NotOnOrAfter') ?? '')
    .filter((value) => value !== '')
    .map((value) => Date.parse(value));
  if (expiries.length === 0 || expiries.some((value) => Number.isNaN(value))) {
    throw new ApiError('sso_response_invalid', 'The assertion has no NotOnOrAfter: an assertion without an end cannot be used once only.');
  }
  const subject = profile.nameID;
  if (typeof subject !== 'string' || subject === '') throw new ApiError('sso_response_invalid', 'The assertion has no NameID.');
  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  const email =
    firstString(EMAIL_ATTRIBUTES.map((name) => attributes[name])) ??
    (profile.nameIDFormat === EMAIL_NAME_ID_FORMAT || subject.includes('@') ? subject : undefined);
  return {
    assertionId,
    expiresAt: new Date(Math.max(...expiries) + SAML_CLOCK_SKEW_MS),
    inResponseTo: inResponseTo === '' ? undefined : inResponseTo,
    subject,
    email,
    name: firstString(NAME_ATTRIBUTES.map((name) => attributes[name])),
  };
}

/** node-saml's errors, as catalog refusals. Its messages name the check; nothing secret is in them. */
function refusalOf(error: unknown): ApiError {
  const message = error instanceof Error ? error.message : String(error);
  const short = message.length > 300 ? `${message.slice(0, 300)}…` : message;
  let code: ErrorCode = 'sso_response_invalid';
  if (/signature|signed data|multiple assertions|refer to/i.test(message)) code = 'sso_signature_invalid';
  else if (/expired|not yet valid/i.test(message)) code = 'sso_assertion_expired';
  else if (/audience/i.test(message)) code = 'sso_audience_mismatch';
  return new ApiError(code, `The SAML response was refused: ${short}`, { cause: error });
}

function parseRoot(xml: string, localName: string): Element | undefined {
  if (xml === '') return undefined;
  const document = new DOMParser({ errorHandler: () => undefined }).parseFromString(xml, 'text/xml');
  const root = document.documentElement;
  if (root?.localName !== localName) return undefined;
  const namespace = localName === 'Response' ? PROTOCOL_NS : ASSERTION_NS;
  return root.namespaceURI === namespace ? root : undefined;
}

function elements(parent: Element, namespace: string, localName: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(namespace, localName));
}

/** The text of `parent`'s direct child of that name (not a nested one). */
function childText(parent: Element, namespace: string, localName: string): string | undefined {
  for (const node of Array.from(parent.childNodes)) {
    const element = node as Element;
    if (element.nodeType === 1 && element.localName === localName && element.namespaceURI === namespace) {
      return element.textContent?.trim() ?? undefined;
    }
  }
  return undefined;
}

function firstString(values: readonly unknown[]): string | undefined {
  for (const value of values) {
    const first = Array.isArray(value) ? (value as unknown[])[0] : value;
    if (typeof first === 'string' && first.trim() !== '') return first.trim();
  }
  return undefined;
}
