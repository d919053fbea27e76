/** The document's tags: every operation names one (its declaration's `operation.tags`). */
export const TAGS = [
  { name: 'health', description: 'Liveness and readiness, on every host.' },
  { name: 'documentation', description: 'This OpenAPI document, on the auth host.' },
  {
    name: 'control-plane',
    description: 'Sign-in of developers to the console: discovery, authorize, email code, tokens.',
  },
  { name: 'management', description: 'The management API: tenants and their clients, for members.' },
  {
    name: 'guests',
    description: 'Guest sessions of a customer tenant, linking intents, upgrade, and the player’s own account.',
  },
  {
    name: 'guest-proofs',
    description: 'Email, chat-platform and OpenID Connect provider proofs of a credential, and sign-in with one.',
  },
  { name: 'customer-tokens', description: 'A customer tenant’s discovery, keys, refresh and revocation.' },
  { name: 'console', description: 'The console page and its backend-for-frontend (console host).' },
] as const;
