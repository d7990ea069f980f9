import { createHmac, timingSafeEqual } from 'node:crypto';

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** Claims of the fake's session tokens. */
export interface SessionClaims {
  sub: string;
  org: string;
  kind: 'kyb' | 'kyc';
  iat: number;
  exp: number;
  jti: string;
}

/** Signs HS256 JWTs with the fake's own key (real JWTs, so expiry readers work on them). */
export function signJwt(claims: SessionClaims, key: Buffer): string {
  const head = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${head}.${createHmac('sha256', key).update(head).digest('base64url')}`;
}

/** The claims of a token this fake signed and that has not expired, else null. */
export function verifyJwt(token: string, key: Buffer, nowSeconds: number): SessionClaims | null {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || !signature) return null;
  const expected = Buffer.from(createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url'));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SessionClaims;
    return claims.exp > nowSeconds ? claims : null;
  } catch {
    return null;
  }
}
