import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { OrganizationParams } from './organizations.schemas.js';

const Time = Type.String({ format: 'date-time' });
/** Long enough for any domain name in Unicode before it becomes punycode (at most 253 characters). */
const DOMAIN_INPUT_LENGTH_MAX = 253;
const DomainInput = Type.String({
  minLength: 1,
  maxLength: DOMAIN_INPUT_LENGTH_MAX,
  description: 'A domain name of two or more labels; upper case, a trailing dot and Unicode (stored as punycode) are accepted.',
});

export const DomainStatus = Type.Union([Type.Literal('pending'), Type.Literal('verified')]);
export const DomainVerification = Type.Union([Type.Literal('dns'), Type.Literal('manual')], {
  description:
    "`dns`: verified once `POST …/verify` finds the TXT record. `manual`: the operator's own assertion that the organization owns the domain; verified at once.",
});

export const OrganizationDomainSchema = Type.Object(
  {
    object: Type.Literal('organization_domain'),
    organization_id: Type.String(),
    domain: Type.String({ description: 'Lower case, ASCII (internationalized names as punycode), no trailing dot.' }),
    status: DomainStatus,
    verification: DomainVerification,
    txt_record: Type.Object(
      {
        name: Type.String({ description: '`_svc-verification.<domain>`.' }),
        value: Type.String({ description: 'The text the record must hold; random for each organization and domain.' }),
      },
      { description: "The TXT record to publish in the domain's DNS for `dns` verification." },
    ),
    created_at: Time,
    verified_at: Type.Union([Time, Type.Null()]),
  },
  {
    $id: 'OrganizationDomain',
    description: "An email domain of an organization; once verified, SSO through the organization's connection answers for it.",
  },
);
export type OrganizationDomain = Static<typeof OrganizationDomainSchema>;

export const OrganizationDomainListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(OrganizationDomainSchema), has_more: Type.Boolean() },
  { $id: 'OrganizationDomainList' },
);
export type OrganizationDomainList = Static<typeof OrganizationDomainListSchema>;

export const DeletedOrganizationDomainSchema = Type.Object(
  { object: Type.Literal('organization_domain'), organization_id: Type.String(), domain: Type.String(), deleted: Type.Literal(true) },
  { $id: 'DeletedOrganizationDomain' },
);
export type DeletedOrganizationDomain = Static<typeof DeletedOrganizationDomainSchema>;

export const DomainParams = StrictObject({ ...OrganizationParams.properties, domain: DomainInput });

export const AddDomainBody = StrictObject({ domain: DomainInput, verification: DomainVerification });
export type AddDomainBody = Static<typeof AddDomainBody>;

/** `starting_after` is a domain of the list. */
export const DomainsPageQuery = StrictObject({
  limit: ListQuery.limit,
  starting_after: Type.Optional(Type.String({ minLength: 1, maxLength: DOMAIN_INPUT_LENGTH_MAX })),
});
export type DomainsPageQuery = Static<typeof DomainsPageQuery>;
