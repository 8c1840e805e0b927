import { reactive } from 'vue';

/** The roles the API knows (src/api/auth/viewer.ts); the token's claims say which the user has. */
export type Role = 'admin' | 'scheduler' | 'viewer';
const ROLES: readonly Role[] = ['admin', 'scheduler', 'viewer'];

const TOKEN_KEY = 'jiaowu.token';
/** Set while the kept token is the development one the page came with. */
const DEV_KEY = 'jiaowu.tokenIsDevelopment';
/** Set when the user signed out: the development token is not taken again in this tab. */
const SIGNED_OUT_KEY = 'jiaowu.signedOut';
const DEV_TOKEN_META = 'jiaowu-dev-token';

export interface Session {
  token: string | null;
  subject: string | null;
  roles: Role[];
  /** Seconds since the epoch, from the token's exp claim. */
  expiresAt: number | null;
  /** Signed in with the development token the service hands to this machine. */
  development: boolean;
  /** Why the last session ended, for the sign-in page: 'expired' or null. */
  ended: 'expired' | null;
}

export const session = reactive<Session>({ token: null, subject: null, roles: [], expiresAt: null, development: false, ended: null });

/** The claims the page reads from a JWT (for what it shows only: the server checks every operation). */
export function readToken(token: string): { subject: string; roles: Role[]; expiresAt: number | null } | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const json = atob(parts[1]!.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(parts[1]!.length / 4) * 4, '='));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as Record<string, unknown>;
    const claimed = [claims.roles, claims.role].flat().filter((r): r is string => typeof r === 'string');
    return {
      subject: typeof claims.sub === 'string' ? claims.sub : '',
      roles: ROLES.filter((r) => claimed.includes(r)),
      expiresAt: typeof claims.exp === 'number' ? claims.exp : null,
    };
  } catch {
    return null;
  }
}

/** Admins and schedulers start, cancel and retry jobs; a viewer only watches. */
export const canOperate = (): boolean => session.roles.includes('admin') || session.roles.includes('scheduler');

export const isSignedIn = (): boolean => session.token !== null && (session.expiresAt === null || session.expiresAt * 1000 > Date.now());

/** Takes a token the server accepted; kept in sessionStorage (this tab only, gone when it closes). */
export function signIn(token: string, development = false): boolean {
  const claims = readToken(token);
  if (!claims) return false;
  Object.assign(session, { token, ...claims, development, ended: null });
  sessionStorage.setItem(TOKEN_KEY, token);
  if (development) sessionStorage.setItem(DEV_KEY, '1');
  else sessionStorage.removeItem(DEV_KEY);
  sessionStorage.removeItem(SIGNED_OUT_KEY);
  return true;
}

const onSignOut: (() => void)[] = [];
/** Called on every sign-out (the API client closes its socket). */
export const whenSignedOut = (fn: () => void): void => {
  onSignOut.push(fn);
};

/** The user's sign-out (reason null) keeps the development token out of this tab; a refused token does not. */
export function signOut(reason: 'expired' | null = null): void {
  Object.assign(session, { token: null, subject: null, roles: [], expiresAt: null, development: false, ended: reason });
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(DEV_KEY);
  if (reason === null) sessionStorage.setItem(SIGNED_OUT_KEY, '1');
  for (const fn of onSignOut) fn();
}

/**
 * At start: the tab's token, else (unless the user signed out in this tab) the
 * development token the service put in the page, which it does only for a browser
 * on its own machine with no JWT settings (as for GraphiQL).
 */
export function restoreSession(): void {
  const dev = document.querySelector<HTMLMetaElement>(`meta[name="${DEV_TOKEN_META}"]`)?.content;
  const kept = sessionStorage.getItem(TOKEN_KEY);
  // A restarted development service has a new token: the page's, not the tab's old one.
  const keptIsOldDev = kept !== null && sessionStorage.getItem(DEV_KEY) === '1' && dev !== undefined && dev !== kept;
  if (kept && !keptIsOldDev && signIn(kept, sessionStorage.getItem(DEV_KEY) === '1') && isSignedIn()) return;
  if (kept) signOut('expired');
  if (dev && sessionStorage.getItem(SIGNED_OUT_KEY) === null) signIn(dev, true);
}
