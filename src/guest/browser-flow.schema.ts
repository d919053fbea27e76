import { obj, str } from '../http/openapi/schema';
import { CLIENT_ID_PATTERN, FLOW_ID_PATTERN } from '../directory/identifiers';

/** The fields that bind a tenant request to its client and browser flow (contract 6). */
export const FLOW = {
  client_id: str({ pattern: CLIENT_ID_PATTERN.source }),
  browser_flow_id: str({ pattern: FLOW_ID_PATTERN.source }),
};

/** `email`, `chat_platform`, or the id of one of the tenant's OpenID Connect providers (contract 14). */
export const IDENTITY_PROVIDER = str({ pattern: '^(email|chat_platform|[a-z][a-z0-9-]{1,31})$' });

/** The credential an upgrade attached or a full account linked (contract 14). */
export const LINKED_IDENTITY = obj({
  provider: IDENTITY_PROVIDER,
  provider_subject: str(),
  email: { type: ['string', 'null'] },
});
