// The package ships no types; the one function the JwsSigner uses.
declare module 'ecdsa-sig-formatter' {
  /** An ECDSA signature in DER as the JOSE form, R || S, base64url-encoded (RFC 7518 section 3.4). */
  export function derToJose(signature: Buffer, alg: 'ES256' | 'ES384' | 'ES512'): string;
}
