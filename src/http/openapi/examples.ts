import type { Schema } from './schema';

/** Sample values by field name, so that every example reads like a real exchange. */
export const SAMPLES: Record<string, unknown> = {
  access_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCIsImtpZCI6ImVzLTEifQ.eyJzdWIiOiJ1c3JfMSJ9.c2ln',
  id_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImVzLTEifQ.eyJzdWIiOiJ1c3JfMSJ9.c2ln',
  refresh_token: 'ses_Qm9vdHN0cmFwU2Vzc2lvbg.3.bWFjLW9mLXRoZS10b2tlbg',
  token_type: 'Bearer',
  expires_in: 300,
  scope: 'openid offline_access',
  session_id: 'ses_Qm9vdHN0cmFwU2Vzc2lvbg',
  user_id: 'usr_eU9BZ3JvdW5kUGxheWVy',
  id: 'usr_eU9BZ3JvdW5kUGxheWVy',
  proof_id: 'prf_UHJvb2ZPZkFuRW1haWw',
  upgrade_proof_id: 'prf_VXBncmFkZVByb29mMQ',
  intent_id: 'lnk_TGlua2luZ0ludGVudDE',
  client_id: 'cli_web_game',
  clientId: 'cli_web_game',
  userId: 'usr_eU9BZ3JvdW5kUGxheWVy',
  sessionId: 'ses_Qm9vdHN0cmFwU2Vzc2lvbg',
  q: 'player@example.com',
  before: '1042',
  next_before: '993',
  date: '2026-01-01',
  browser_flow_id: 'flw_QnJvd3NlckZsb3dJZDE',
  flow_id: 'flw_Q29uc29sZUZsb3dJZDE',
  email: 'player@example.com',
  code: '123456',
  grant_type: 'refresh_token',
  token: 'ses_Qm9vdHN0cmFwU2Vzc2lvbg.3.bWFjLW9mLXRoZS10b2tlbg',
  token_type_hint: 'refresh_token',
  provider: 'email',
  providerId: 'apple',
  providerSubject: '001234.5f6e7d8c9b0a.1234',
  nonce: 'bm9uY2UtZ2l2ZW4tdG8tdGhlLXNkaw',
  provider_subject: 'player@example.com',
  redirect_to:
    'https://console.example/api/auth/callback?code=Y29kZQ&state=c3RhdGU&iss=https%3A%2F%2Fauth.example%2Ft%2Fcontrol-plane',
  authorize_url: 'https://discord.com/oauth2/authorize?response_type=code&client_id=123&state=c3RhdGU',
  name: 'Acme Games',
  role: 'owner',
  status: 'active',
  created_at: '2026-01-01T00:00:00.000Z',
  type: 'browser',
  enabled: true,
  scopes: ['openid', 'offline_access'],
  web_origins: ['https://play.acme.example'],
  revoked: true,
  error: 'invalid_request',
  error_description: 'The request is malformed.',
  email_verified: true,
  tenantId: 'acme',
  state: 'c3RhdGUtZnJvbS10aGUtc2VydmljZQ',
  response_type: 'code',
  redirect_uri: 'https://console.example/api/auth/callback',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
  code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  error_uri: 'https://discord.com/developers/docs',
};

/** Examples of the document's component schemas, which a reference alone cannot produce. */
const COMPONENT_EXAMPLES: Record<string, unknown> = {
  '#/components/schemas/Revoked': { revoked: true },
  '#/components/schemas/Ready': { status: 'ready', checks: { postgres: 'up', redis: 'up' } },
  '#/components/schemas/NotReady': {
    error: 'temporarily_unavailable',
    error_description: 'A dependency is unavailable.',
    checks: { postgres: 'up', redis: 'down' },
  },
};

/** An example that satisfies `schema`: sample values by name, else the schema's own constraints. */
export function exampleOf(schema: Schema, name = ''): unknown {
  if (typeof schema.$ref === 'string' && schema.$ref in COMPONENT_EXAMPLES) return COMPONENT_EXAMPLES[schema.$ref];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum))
    return SAMPLES[name] !== undefined && schema.enum.includes(SAMPLES[name]) ? SAMPLES[name] : schema.enum[0];
  if (schema.type === 'object' && schema.properties) {
    return Object.fromEntries(
      Object.entries(schema.properties as Record<string, Schema>).map(([k, v]) => [k, exampleOf(v, k)]),
    );
  }
  if (schema.type === 'object') return {};
  if (SAMPLES[name] !== undefined) return SAMPLES[name];
  if (schema.type === 'array') return [exampleOf(schema.items as Schema)];
  if (schema.type === 'integer') return 600;
  if (schema.type === 'boolean') return true;
  if (Array.isArray(schema.type)) return null;
  return 'text';
}
