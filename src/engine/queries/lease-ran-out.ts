import { MIN_HEARTBEAT_MS } from '../progress-reporter';

/** Beyond a heartbeat interval, how long after a server start a live worker may take to renew its lease. */
export const RESTART_GRACE_SLACK_SECONDS = 5;

/**
 * SQL: when the server last came up — started, or reinitialised after a backend crash.
 * A crash ends every session as a restart does, but leaves pg_postmaster_start_time()
 * where it was; crash recovery resets the shared statistics, so the bgwriter's reset
 * time moves then (readable by any role, unlike the checkpointer's backend_start). An
 * operator's pg_stat_reset_shared('bgwriter') moves it too: one grace more, never less.
 */
export const SERVER_UP_SINCE = 'greatest(pg_postmaster_start_time(), pg_stat_get_bgwriter_stat_reset_time())';

/**
 * SQL: the lease of outbox row `alias` ran out in a way that says its worker is gone —
 * what lets the lease rescuer put the row back and a broker copy's claim take it over.
 * A lease that ran out while the server was down, just starting or recovering from a
 * crash says nothing about its worker, whose heartbeats could not land: it is judged only
 * once the server has been up (SERVER_UP_SINCE) for one heartbeat interval of that
 * lease (lease/3, at least MIN_HEARTBEAT_MS;
 * the lease is what the last claim or heartbeat set, lease_expires_at - updated_at) and
 * RESTART_GRACE_SLACK_SECONDS more — a live worker has re-taken its lease by then, on the
 * same attempt.
 */
export const leaseRanOut = (alias: string): string =>
  `${alias}.lease_expires_at < now()
         AND ${SERVER_UP_SINCE} < now()
           - greatest(make_interval(secs => ${MIN_HEARTBEAT_MS / 1_000}), (${alias}.lease_expires_at - ${alias}.updated_at) / 3)
           - make_interval(secs => ${RESTART_GRACE_SLACK_SECONDS})`;
