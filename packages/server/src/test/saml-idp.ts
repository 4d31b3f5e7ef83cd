import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import * as samlify from 'samlify';

/**
 * A SAML 2.0 identity provider for tests, made with samlify: it signs login responses (the
 * assertion, the response, or both) with its own RSA key, for a service provider described by its
 * entity id and ACS URL. Every value of the response can be overridden, which is how the tests
 * make expired, misaddressed and unsolicited responses; what samlify then signs is exactly that.
 */

const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

export interface SigningKeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

/** A self-signed RSA-2048 certificate and its key, made with openssl. */
export function makeSamlSigningKeyPair(commonName = 'svc test idp'): SigningKeyPair {
  const directory = mkdtempSync(join(tmpdir(), 'svc-saml-'));
  try {
    const certFile = join(directory, 'cert.pem');
    const keyFile = join(directory, 'key.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', `/CN=${commonName}`],
      { stdio: 'ignore' },
    );
    return { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The AuthnRequest id in an HTTP-Redirect binding URL. */
export function authnRequestIdOf(url: string): string {
  const request = new URL(url).searchParams.get('SAMLRequest');
  if (request === null) throw new Error('no SAMLRequest in the URL');
  const xml = inflateRawSync(Buffer.from(request, 'base64')).toString('utf8');
  const id = /<samlp:AuthnRequest[^>]*\sID="([^"]+)"/.exec(xml)?.[1];
  if (id === undefined) throw new Error(`no AuthnRequest ID in ${xml.slice(0, 300)}`);
  return id;
}

export interface ResponseOptions {
  readonly email: string;
  /** The AuthnRequest answered; omitted for an IdP-initiated response. */
  readonly inResponseTo?: string | undefined;
  /** Which parts are signed; default the assertion only. */
  readonly sign?: 'assertion' | 'response' | 'both';
  /** Template values to override (`Audience`, `ConditionsNotOnOrAfter`, `SubjectRecipient`, …). */
  readonly overrides?: Readonly<Record<string, string | undefined>>;
}

export interface TestSamlIdp {
  readonly entityId: string;
  readonly ssoUrl: string;
  readonly certPem: string;
  /** A base64 SAMLResponse for the service provider (entity id and ACS URL). */
  loginResponse(sp: { entityId: string; acsUrl: string }, options: ResponseOptions): Promise<string>;
}

export function makeSamlIdp(options: { entityId: string; ssoUrl: string; keys?: SigningKeyPair }): TestSamlIdp {
  const keys = options.keys ?? makeSamlSigningKeyPair();
  const idp = samlify.IdentityProvider({
    entityID: options.entityId,
    privateKey: keys.keyPem,
    signingCert: keys.certPem,
    nameIDFormat: [EMAIL_FORMAT],
    singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: options.ssoUrl }],
    singleLogoutService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${options.ssoUrl}/logout` }],
  });
  return {
    entityId: options.entityId,
    ssoUrl: options.ssoUrl,
    certPem: keys.certPem,
    async loginResponse(target, response) {
      const sign = response.sign ?? 'assertion';
      const sp = samlify.ServiceProvider({
        entityID: target.entityId,
        assertionConsumerService: [{ Binding: samlify.Constants.namespace.binding.post, Location: target.acsUrl }],
        wantAssertionsSigned: sign !== 'response',
        wantMessageSigned: sign !== 'assertion',
      });
      const now = new Date();
      const later = new Date(now.getTime() + 5 * 60 * 1000).toISOString();
      const values: Record<string, string | undefined> = {
        ID: `_${randomBytes(16).toString('hex')}`,
        AssertionID: `_${randomBytes(16).toString('hex')}`,
        Destination: target.acsUrl,
        Audience: target.entityId,
        SubjectRecipient: target.acsUrl,
        Issuer: options.entityId,
        IssueInstant: now.toISOString(),
        StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
        ConditionsNotBefore: now.toISOString(),
        ConditionsNotOnOrAfter: later,
        SubjectConfirmationDataNotOnOrAfter: later,
        NameIDFormat: EMAIL_FORMAT,
        NameID: response.email,
        InResponseTo: response.inResponseTo,
        AuthnStatement: '',
        AttributeStatement: '',
        ...response.overrides,
      };
      const { context } = await idp.createLoginResponse(sp, { extract: {} }, 'post', { email: response.email }, (template: string) => ({
        id: values['ID'] ?? '',
        context: samlify.SamlLib.replaceTagsByValue(template, values),
      }));
      return context;
    },
  };
}

/** The XML of a base64 SAMLResponse, and back, for the tests that tamper with it. */
export function decodeResponse(samlResponse: string): string {
  return Buffer.from(samlResponse, 'base64').toString('utf8');
}

export function encodeResponse(xml: string): string {
  return Buffer.from(xml, 'utf8').toString('base64');
}
