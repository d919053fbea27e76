import { CLIENT_ID_PATTERN, ID_PATTERN, newId, TENANT_ID_PATTERN } from '../platform/crypto/ids';

/**
 * The directory's identifiers (contract section 2): which prefix names which record, and how the
 * directory and the features mint and check them. Tenant and client ids are chosen by operators;
 * the others are opaque, minted here.
 */
export { CLIENT_ID_PATTERN, TENANT_ID_PATTERN };

/** Prefixes of the records the service mints ids for. */
const PREFIX = {
  user: 'usr',
  identity: 'idn',
  client: 'cli',
  session: 'ses',
  flow: 'flw',
  proof: 'prf',
  linkingIntent: 'lnk',
  event: 'evt',
} as const;

export type IdKind = keyof typeof PREFIX;

/** A fresh id of the record kind: its prefix and 128 bits from the CSPRNG. */
export const newRecordId = (kind: IdKind): string => newId(PREFIX[kind]);

/** The syntax of the record kind's ids, for checking an id before it reaches a query or a key. */
export const recordIdPattern = (kind: IdKind): RegExp => ID_PATTERN(PREFIX[kind]);

export const USER_ID_PATTERN = recordIdPattern('user');
export const SESSION_ID_PATTERN = recordIdPattern('session');
export const FLOW_ID_PATTERN = recordIdPattern('flow');
export const PROOF_ID_PATTERN = recordIdPattern('proof');

/** A token's `jti`: an event id without its prefix (contract section 3 and 6). */
export const newTokenId = (): string => newRecordId('event').slice(PREFIX.event.length + 1);
