import type { DocumentStore } from '@apollo/server';
import type { DocumentNode } from 'graphql';

/** Documents kept at most; with `MAX_CACHED_QUERY_LENGTH` this bounds what a cache holds to a few MB. */
export const DOCUMENT_CACHE_ENTRIES = 200;
/**
 * The longest document text kept. Honest clients send the same few short documents
 * again and again; a hostile client sends a new text every time, so keeping large ones
 * buys nothing and holds their syntax trees (tens of times their text).
 */
export const MAX_CACHED_QUERY_LENGTH = 4_096;

/**
 * A small LRU of accepted (parsed and validated) documents by key: the query text for
 * our own check, Apollo's query hash as its `documentStore`. Bounded by count and by the
 * document's length, and costing a Map operation per use: Apollo's default store sizes
 * every document by serialising it, and keeps 30 MB of them, which hostile clients fill
 * with documents of their own.
 */
export class DocumentCache implements DocumentStore {
  private readonly entries = new Map<string, DocumentNode>();

  constructor(
    private readonly limit = DOCUMENT_CACHE_ENTRIES,
    private readonly maxQueryLength = MAX_CACHED_QUERY_LENGTH,
  ) {}

  /** The document kept under `key`, now the most recently used; undefined if none. */
  peek(key: string): DocumentNode | undefined {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  /** Keeps `document` unless its text is longer than the cache takes. */
  keep(key: string, document: DocumentNode): void {
    if ((document.loc?.end ?? Number.POSITIVE_INFINITY) > this.maxQueryLength) return;
    this.entries.delete(key);
    this.entries.set(key, document);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }

  // --- DocumentStore, for Apollo Server's `documentStore` ---------------------------
  async get(key: string): Promise<DocumentNode | undefined> {
    return this.peek(key);
  }

  async set(key: string, value: DocumentNode): Promise<void> {
    this.keep(key, value);
  }

  async delete(key: string): Promise<boolean> {
    return this.entries.delete(key);
  }
}
