import { randomBytes } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../../config';
import { ApiRole, type Viewer } from './viewer';

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
  /** JWKS URL (RS256/ES256/EdDSA keys). */
  jwksUrl?: string;
  issuer?: string;
  audience?: string;
}

const ALL_ROLES = new Set<string>(Object.values(ApiRole));
const DEV_ISSUER = 'jiaowu-jobs-dev';
const DEV_AUDIENCE = 'jiaowu-jobs';

/** Verifies bearer JWTs with `jose`; turns their claims into a Viewer. */
export class Authenticator {
  private readonly key: Uint8Array | JWTVerifyGetKey;
  private readonly algorithms: string[] | undefined;

  constructor(readonly settings: AuthSettings) {
    if (settings.secret) {
      this.key = new TextEncoder().encode(settings.secret);
      this.algorithms = ['HS256'];
    } else if (settings.jwksUrl) {
      this.key = createRemoteJWKSet(new URL(settings.jwksUrl));
      this.algorithms = undefined;
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
    let payload: JWTPayload;
    try {
      const options = { issuer: this.settings.issuer, audience: this.settings.audience, algorithms: this.algorithms };
      payload =
        this.key instanceof Uint8Array
          ? (await jwtVerify(token, this.key, options)).payload
          : (await jwtVerify(token, this.key, options)).payload;
    } catch (error) {
      throw new AuthError('UNAUTHENTICATED', describeJoseError(error));
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
    return { subject: payload.sub, roles, grants, expiresAt: typeof payload.exp === 'number' ? payload.exp : null };
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
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `The token's ${error.claim} claim is not accepted`;
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
  const { jwtSecret, jwksUrl, issuer, audience } = config.auth;
  if (jwtSecret && jwksUrl) throw new ConfigError('JWT_JWKS_URL', jwksUrl, 'unset when JWT_SECRET is set (use one of them)');
  if (jwtSecret) {
    if (config.nodeEnv === 'production' && Buffer.byteLength(jwtSecret) < 32) {
      throw new ConfigError('JWT_SECRET', '***', 'at least 32 bytes in production (HS256)');
    }
    return { authenticator: new Authenticator({ secret: jwtSecret, issuer, audience }), devAdminToken: null };
  }
  if (jwksUrl) return { authenticator: new Authenticator({ jwksUrl, issuer, audience }), devAdminToken: null };
  if (config.nodeEnv === 'production') {
    throw new ConfigError('JWT_SECRET', '', 'a shared secret (HS256) or JWT_JWKS_URL: production needs one to verify tokens');
  }
  const authenticator = new Authenticator({
    secret: randomBytes(32).toString('base64url'),
    issuer: issuer ?? DEV_ISSUER,
    audience: audience ?? DEV_AUDIENCE,
  });
  const devAdminToken = await authenticator.sign({ sub: 'dev-admin', roles: [ApiRole.ADMIN] }, '7d');
  logger.warn(
    { token: devAdminToken },
    'no JWT_SECRET or JWT_JWKS_URL: generated a development secret for this run; use this admin token (Authorization: Bearer <token>)',
  );
  return { authenticator, devAdminToken };
}
