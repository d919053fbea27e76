import { obj, str, type Schema } from './schema';

/**
 * Shapes of the management API (contracts 5 and 15), which the console BFF's proxy passes on as
 * they are (contract 4): both document them with these.
 */
const ROLE = str({ enum: ['owner', 'admin', 'developer', 'viewer'] });
export const TENANT_LIST = obj({ tenants: { type: 'array', items: obj({ id: str(), name: str(), role: ROLE }) } });
export const TENANT = obj({
  tenant: obj({ id: str(), name: str(), status: str(), created_at: str({ format: 'date-time' }) }),
});
export const CLIENT_LIST = obj({
  clients: {
    type: 'array',
    items: obj({
      client_id: str(),
      name: str(),
      type: str({ enum: ['browser', 'native'] }),
      enabled: { type: 'boolean' },
      scopes: { type: 'array', items: str() },
      web_origins: {
        type: 'array',
        items: str(),
        description: 'origins that may call the tenant API by CORS (redirect URIs’ origins plus registered ones)',
      },
    }),
  },
});

const strings = (description: string): Schema => ({ type: 'array', items: str(), description });

/** The client object of contract 15: never a secret. */
const CLIENT_OBJECT = obj({
  client_id: str({ pattern: '^cli_' }),
  name: str(),
  type: str({ enum: ['browser', 'native'] }),
  enabled: { type: 'boolean' },
  scopes: strings('of openid, profile, email, offline_access'),
  redirect_uris: strings('https (http on loopback outside production); no fragment or userinfo'),
  web_origins: strings('origins that may call the tenant API by CORS (redirect URIs’ origins plus registered ones)'),
});
export const CLIENT = obj({ client: CLIENT_OBJECT });

/** A client's name as the console sends it: not blank, no control characters (clients.dto.ts). */
const CLIENT_NAME = str({
  maxLength: 100,
  pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$',
});

/** Request shapes of the console's client changes (contract 15). */
export const CREATE_CLIENT = obj({
  name: CLIENT_NAME,
  type: str({ enum: ['browser', 'native'] }),
  scopes: strings('unique values of openid, profile, email, offline_access'),
  redirect_uris: strings('a browser client needs at least one'),
  web_origins: strings('browser clients only'),
});
export const UPDATE_CLIENT = obj(
  {
    name: CLIENT_NAME,
    enabled: { type: 'boolean' },
    scopes: strings('unique values of openid, profile, email, offline_access'),
    redirect_uris: strings('replaces the list'),
    web_origins: strings('replaces the list; browser clients only'),
  },
  [],
);

/** A player as the console shows it (contract 15); identities as in GET /t/{tenantId}/me. */
const PLAYER = obj({
  id: str({ pattern: '^usr_' }),
  guest: { type: 'boolean' },
  status: str({ enum: ['active', 'deactivated'] }),
  created_at: str({ format: 'date-time' }),
  identities: {
    type: 'array',
    items: obj({ provider: str(), provider_subject: str(), email: str({ description: 'email identities only' }) }, [
      'provider',
      'provider_subject',
    ]),
  },
});
const PLAYER_SESSION = obj({
  id: str({ description: 'the session id (ses_…)' }),
  client_id: str(),
  created_at: str({ format: 'date-time' }),
  last_used_at: { type: ['string', 'null'], format: 'date-time' },
});
export const PLAYERS = obj({ users: { type: 'array', items: PLAYER } });
export const PLAYER_WITH_SESSIONS = obj({ user: PLAYER, sessions: { type: 'array', items: PLAYER_SESSION } });
export const DEACTIVATED_PLAYER = obj({ user: PLAYER });
export const ERASED_PLAYER = obj({ deleted: { const: true } });
export const REVOKED_SESSION = obj({ revoked: { type: 'boolean', description: 'whether the session was still live' } });

/** The audit trail, newest first (contract 15): ids and facts only, never a secret or an address. */
export const AUDIT_PAGE = obj({
  events: {
    type: 'array',
    items: obj({
      id: str({ description: 'the event id, digits' }),
      type: str(),
      subject: str(),
      created_at: str({ format: 'date-time' }),
      data: { type: 'object' },
    }),
  },
  next_before: { type: ['string', 'null'], description: 'pass as `before` for the next, older page; null on the last' },
});
const COUNT = { type: 'integer', minimum: 0 };
export const DAILY_STATS = obj({
  days: {
    type: 'array',
    items: obj({ date: str({ format: 'date' }), guests_created: COUNT, upgrades: COUNT, sign_ins: COUNT }),
  },
});
const MEMBER = obj({ user_id: str({ pattern: '^usr_' }), email: { type: ['string', 'null'] }, role: ROLE });
export const MEMBERS = obj({ members: { type: 'array', items: MEMBER } });
export const ADDED_MEMBER = obj({ member: MEMBER });
export const ADD_MEMBER = obj({ email: str({ format: 'email', maxLength: 320 }), role: ROLE });
export const REMOVED_MEMBER = obj({ removed: { const: true } });
