/**
 * Upstash-Signature: an HS256 JWT over the delivery, keyed with the UTF-8 bytes of the current
 * signing key. Claims: iss "Upstash", sub = exact destination URL, iat/nbf = now, exp = now+300,
 * jti unique, body = base64url(SHA-256(raw body)) (the SDK's Receiver checks all of these).
 */
import crypto from 'node:crypto';

const HEADER = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');

export function signDelivery(key: string, url: string, body: Buffer, nowMs = Date.now()): string {
  const now = Math.floor(nowMs / 1000);
  const claims = {
    iss: 'Upstash', sub: url, exp: now + 300, nbf: now, iat: now,
    jti: `jwt_${crypto.randomBytes(12).toString('hex')}`,
    body: crypto.createHash('sha256').update(body).digest('base64url'),
  };
  const unsigned = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${unsigned}.${crypto.createHmac('sha256', Buffer.from(key, 'utf8')).update(unsigned).digest('base64url')}`;
}

export function newSigningKey(): string {
  return `sig_${crypto.randomBytes(21).toString('base64url').replace(/[-_]/g, 'x')}`;
}
