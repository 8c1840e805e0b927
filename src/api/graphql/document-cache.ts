import type { DocumentStore, PersistedQueryOptions } from '@apollo/server';
import type { DocumentNode } from 'graphql';

/** Documents kept at most; with `MAX_CACHED_QUERY_LENGTH` this bounds what a cache holds to a few MB. */
export const DOCUMENT_CACHE_ENTRIES = 200;
/**
 * Persisted-query texts kept at most (with `MAX_CACHED_QUERY_LENGTH`, at most 4 MB): one
 * per operation each client app sends, with room for several apps and versions.
 */
export const PERSISTED_QUERY_ENTRIES = 1_000;
/**
 * The longest document text kept. Honest clients send the same few short documents
 * again and again; a hostile client sends a new text every time, so keeping large ones
 * buys nothing and holds their syntax trees (tens of times their text).
 */
export const MAX_CACHED_QUERY_LENGTH = 4_096;

/**
 * A least-recently-used map bounded by its count of entries and by the length of the
 * query text behind each, costing a Map operation per use. Apollo Server's default
 * store sizes every entry by serialising it and keeps 30 MB of them, which any caller,
 * with no token, fills with texts of its own and keeps there.
 */
abstract class BoundedCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(
    private readonly limit: number,
    private readonly maxQueryLength: number,
  ) {}

  /** The length of the query text behind `value`; Infinity when unknown (never kept). */
  protected abstract queryLength(value: V): number;

  /** The value kept under `key`, now the most recently used; undefined if none. */
  peek(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  /** Keeps `value` unless its text is longer than the cache takes. */
  keep(key: string, value: V): void {
    if (this.queryLength(value) > this.maxQueryLength) return;
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }

  // --- Apollo Server's KeyValueCache ---------------------------------------------
  async get(key: string): Promise<V | undefined> {
    return this.peek(key);
  }

  async set(key: string, value: V): Promise<void> {
    this.keep(key, value);
  }

  async delete(key: string): Promise<boolean> {
    return this.entries.delete(key);
  }
}

/**
 * Accepted (parsed and validated) documents by key: the query text for our own check,
 * Apollo's query hash as its `documentStore`.
 */
export class DocumentCache extends BoundedCache<DocumentNode> implements DocumentStore {
  constructor(limit = DOCUMENT_CACHE_ENTRIES, maxQueryLength = MAX_CACHED_QUERY_LENGTH) {
    super(limit, maxQueryLength);
  }

  protected queryLength(document: DocumentNode): number {
    return document.loc?.end ?? Number.POSITIVE_INFINITY;
  }
}

/**
 * Automatic persisted queries' texts by hash (Apollo Server's `persistedQueries.cache`).
 * A text too long to keep is still answered when it comes with its hash; the client's
 * next request by hash alone gets PERSISTED_QUERY_NOT_FOUND and sends the text again, as
 * the protocol provides.
 */
export class PersistedQueryCache extends BoundedCache<string> implements NonNullable<PersistedQueryOptions['cache']> {
  constructor(limit = PERSISTED_QUERY_ENTRIES, maxQueryLength = MAX_CACHED_QUERY_LENGTH) {
    super(limit, maxQueryLength);
  }

  protected queryLength(query: string): number {
    return query.length;
  }
}
