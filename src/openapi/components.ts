import type { AppConfig } from '../config/config';
import { obj, ref, str, type Schema } from '../http/openapi/schema';

/** Schemas several routes refer to by name, and the security schemes that state the policies. */
export function components(config: AppConfig): Schema {
  return {
    schemas: {
      Error: obj({ error: str({ pattern: '^[a-z_]+$' }), error_description: str() }),
      Revoked: obj({ revoked: { type: 'boolean' } }),
      Ready: obj({ status: str({ const: 'ready' }), checks: ref('Checks'), warnings: ref('Warnings') }, [
        'status',
        'checks',
      ]),
      NotReady: obj(
        {
          error: str({ const: 'temporarily_unavailable' }),
          error_description: str(),
          checks: ref('Checks'),
          warnings: ref('Warnings'),
        },
        ['error', 'error_description', 'checks'],
      ),
      Checks: obj({ postgres: str({ enum: ['up', 'down'] }), redis: str({ enum: ['up', 'down'] }) }),
      Warnings: {
        type: 'array',
        items: str(),
        description: 'what the operator must clear, such as a Redis maxmemory-policy other than noeviction',
      },
    },
    securitySchemes: {
      managementBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (RS256, aud urn:svc:management)' },
      guestBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (ES256, tenant issuer, client audience)' },
      consoleClientBasic: { type: 'http', scheme: 'basic' },
      consoleSession: { type: 'apiKey', in: 'cookie', name: '__Host-svc_console' },
      controlFlowCookie: { type: 'apiKey', in: 'cookie', name: '__Host-svc_control_flow' },
      authOrigin: { type: 'apiKey', in: 'header', name: 'Origin', description: `exactly ${config.authOrigin}` },
      consoleOrigin: { type: 'apiKey', in: 'header', name: 'Origin', description: `exactly ${config.consoleOrigin}` },
    },
  };
}
