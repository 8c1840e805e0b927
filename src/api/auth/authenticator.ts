import { randomBytes } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { ConfigError, DEFAULT_JWT_MAX_LIFETIME_SECONDS, JWKS_ALGORITHMS, redactUrl, type Config } from '../../config';
import { ApiRole, isExpired, type Viewer } from './viewer';

/** Why a presented token was refused: UNAUTHENTICATED (4401) or FORBIDDEN (4403). */
export class AuthError extends Error {
  constructor(
    readonly code: 'UNAUTHENTICATED' | 'FORBIDDEN',
    message: string,
  ) {
    super(message);
    this.name = 'AuthError';
  }
}

export interface AuthSettings {
  /** HS256 shared secret. */
  secret?: string;
  /** JWKS URL: https (plain http only to this machine). */
  jwksUrl?: string;
  /** Algorithms accepted from the JWKS; RS256, ES256 and EdDSA when not given. */
  algorithms?: readonly string[];
  issuer?: string;
  audience?: string;
  /** Longest validity a token may claim (exp − iat, or exp − now without iat); 24 h when not given. */
  maxLifetimeSeconds?: number;
}

/**
 * Clock skew allowed between the token's issuer and this machine, in the lifetime check
 * only: expiry is exact everywhere (HTTP, socket admission, the socket's close at expiry).
 */
const CLOCK_TOLERANCE_SECONDS = 30;
/** Verified tokens kept, so that a client sending the same token again costs no signature check. */
const VERIFIED_CACHE_SIZE = 1_000;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const ALL_ROLES = new Set<string>(Object.values(ApiRole));
const DEV_ISSUER = 'jiaowu-jobs-dev';
const DEV_AUDIENCE = 'jiaowu-jobs';

/** Verifies bearer JWTs with `jose`; turns their claims into a Viewer. */
export class Authenticator {
  private readonly key: Uint8Array | JWTVerifyGetKey;
  private readonly algorithms: string[];
  readonly maxLifetimeSeconds: number;
  /** token → who it names, most recently used last (an LRU); entries are dropped once expired. */
  private readonly verified = new Map<string, Viewer>();

  constructor(readonly settings: AuthSettings) {
    this.maxLifetimeSeconds = settings.maxLifetimeSeconds ?? DEFAULT_JWT_MAX_LIFETIME_SECONDS;
    if (settings.secret) {
      this.key = new TextEncoder().encode(settings.secret);
      this.algorithms = ['HS256'];
    } else if (settings.jwksUrl) {
      const url = new URL(settings.jwksUrl);
      // Keys fetched over plain http could be swapped by anyone on the path.
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
        throw new Error('The JWKS URL must be https (plain http only to this machine)');
      }
      // Only asymmetric algorithms: a JWKS holds public keys, and an HMAC "signed" with a public key proves nothing.
      const algorithms = [...(settings.algorithms ?? ['RS256', 'ES256', 'EdDSA'])];
      const unknown = algorithms.filter((a) => !(JWKS_ALGORITHMS as readonly string[]).includes(a));
      if (algorithms.length === 0 || unknown.length > 0) throw new Error(`JWKS algorithms must be some of ${JWKS_ALGORITHMS.join(', ')}`);
      this.key = createRemoteJWKSet(url);
      this.algorithms = algorithms;
    } else {
      throw new Error('Authenticator needs a secret or a JWKS URL');
    }
  }

  /** A token from an `Authorization` header value or a bare token. */
  static tokenFrom(value: unknown): string | null {
    if (typeof value !== 'string') return null;
    const trimmed = value.trim();
    if (trimmed === '') return null;
    const match = /^Bearer\s+(\S+)$/i.exec(trimmed);
    if (match) return match[1]!;
    return /\s/.test(trimmed) ? null : trimmed;
  }

  async verify(token: string): Promise<Viewer> {
    const known = this.verified.get(token);
    if (known) {
      this.verified.delete(token);
      if (!isExpired(known)) {
        this.verified.set(token, known);
        return known;
      }
    }
    const viewer = await this.verifyAfresh(token);
    this.verified.set(token, viewer);
    if (this.verified.size > VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    return viewer;
  }

  private async verifyAfresh(token: string): Promise<Viewer> {
    let payload: JWTPayload;
    try {
      const options = {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: this.algorithms,
        requiredClaims: ['exp'],
      };
      payload =
        this.key instanceof Uint8Array
          ? (await jwtVerify(token, this.key, options)).payload
          : (await jwtVerify(token, this.key, options)).payload;
    } catch (error) {
      throw new AuthError('UNAUTHENTICATED', describeJoseError(error));
    }
    // A token valid for years is as good as a password that never changes: refuse long ones.
    const now = Math.floor(Date.now() / 1000);
    const issuedAt = typeof payload.iat === 'number' ? Math.min(payload.iat, now) : now;
    if (payload.exp! - issuedAt > this.maxLifetimeSeconds + CLOCK_TOLERANCE_SECONDS) {
      throw new AuthError('UNAUTHENTICATED', `The token is valid for longer than ${this.maxLifetimeSeconds} s; ask for a shorter-lived one`);
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') {
      throw new AuthError('UNAUTHENTICATED', 'The token has no subject (sub claim)');
    }
    const claimed = [...asStrings(payload.roles), ...asStrings((payload as { role?: unknown }).role)];
    const roles = new Set(claimed.filter((r) => ALL_ROLES.has(r)) as ApiRole[]);
    const grants = new Set([
      ...claimed.filter((r) => !ALL_ROLES.has(r)),
      ...(typeof payload.scope === 'string' ? payload.scope.split(/\s+/).filter(Boolean) : []),
      ...asStrings((payload as { scp?: unknown }).scp),
    ]);
    if (roles.size === 0) throw new AuthError('FORBIDDEN', `The token grants none of the roles ${[...ALL_ROLES].join(', ')}`);
    return { subject: payload.sub, roles, grants, expiresAt: payload.exp! };
  }

  /** Signs a token with the shared secret (development and tests only). */
  async sign(claims: { sub: string; roles: string[]; scope?: string }, expiresIn: string | number = '12h'): Promise<string> {
    if (!this.settings.secret) throw new Error('Only a shared-secret authenticator can sign tokens');
    let jwt = new SignJWT({ roles: claims.roles, ...(claims.scope ? { scope: claims.scope } : {}) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(claims.sub)
      .setIssuedAt()
      .setExpirationTime(expiresIn);
    if (this.settings.issuer) jwt = jwt.setIssuer(this.settings.issuer);
    if (this.settings.audience) jwt = jwt.setAudience(this.settings.audience);
    return jwt.sign(new TextEncoder().encode(this.settings.secret));
  }
}

function asStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

function describeJoseError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The token has expired';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The token signature is not valid';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    return error.reason === 'missing' ? `The token has no ${error.claim} claim` : `The token's ${error.claim} claim is not accepted`;
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'No key of the JWKS matches the token';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'The token is signed with an algorithm this service does not accept';
  return 'The token is not a valid JWT';
}

export interface ApiAuth {
  authenticator: Authenticator;
  /** An admin token for GraphiQL's pre-fill; set only with a generated development secret. */
  devAdminToken: string | null;
}

/**
 * The authenticator the configuration asks for. With no JWT settings: in production,
 * refuse to start; otherwise generate a development secret and an admin token.
 */
export async function createApiAuth(config: Config, logger: Logger): Promise<ApiAuth> {
  const { jwtSecret, jwksUrl, issuer, audience, maxLifetimeSeconds, algorithms } = config.auth;
  const production = config.nodeEnv === 'production';
  if (jwtSecret && jwksUrl) throw new ConfigError('JWT_JWKS_URL', redactUrl(jwksUrl), 'unset when JWT_SECRET is set (use one of them)');
  if (jwtSecret) {
    if (production && Buffer.byteLength(jwtSecret) < 32) {
      throw new ConfigError('JWT_SECRET', '***', 'at least 32 bytes in production (HS256)');
    }
    return { authenticator: new Authenticator({ secret: jwtSecret, issuer, audience, maxLifetimeSeconds }), devAdminToken: null };
  }
  if (jwksUrl) return { authenticator: new Authenticator({ jwksUrl, algorithms, issuer, audience, maxLifetimeSeconds }), devAdminToken: null };
  if (production) {
    throw new ConfigError('JWT_SECRET', '', 'a shared secret (HS256) or JWT_JWKS_URL: production needs one to verify tokens');
  }
  const authenticator = new Authenticator({
    secret: randomBytes(32).toString('base64url'),
    issuer: issuer ?? DEV_ISSUER,
    audience: audience ?? DEV_AUDIENCE,
    maxLifetimeSeconds,
  });
  // As long as any token may live: a new one comes with every start.
  const devAdminToken = await authenticator.sign({ sub: 'dev-admin', roles: [ApiRole.ADMIN] }, `${maxLifetimeSeconds}s`);
  logger.warn(
    { token: devAdminToken },
    'no JWT_SECRET or JWT_JWKS_URL: generated a development secret for this run; use this admin token (Authorization: Bearer <token>)',
  );
  return { authenticator, devAdminToken };
}
