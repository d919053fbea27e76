/**
 * Canonical form of an email address used as an identity subject: trimmed and lower-cased, so
 * `Dev@Studio.com` and `dev@studio.com` are one identity. Validation happens at the edge (DTOs).
 */
export function canonicalEmail(email: string): string {
  return email.trim().toLowerCase();
}
