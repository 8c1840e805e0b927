import { DEFAULT_LOCALE, Locale } from './locale';

/**
 * Stable message codes with named parameters, and their sentences in every locale.
 *
 * A code is dot-separated lowercase words (`schedule.loading-term`): what a UI keys its
 * own translations on. Its parameters are a flat object of JSON values (numbers,
 * strings, booleans, null), so the same object travels through the database, the
 * event bus and the API unchanged.
 */
export type MessageParamValue = string | number | boolean | null;
export type MessageParams = Readonly<Record<string, MessageParamValue>>;

export const MESSAGE_CODE_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?:\.[a-z][a-z0-9]*(?:-[a-z0-9]+)*)+$/;

export interface MessageDefinition<P extends MessageParams = MessageParams> {
  /** When the message is used and what its parameters mean (shown in the README's code list). */
  readonly description: string;
  /** Parameters a real use could carry: the catalog test renders every code with them. */
  readonly example: P;
  readonly sentences: { readonly [L in Locale]: (params: P) => string };
}

export type MessageCatalog = Readonly<Record<string, MessageDefinition<any>>>;

/** Declares one message; the parameters' type comes from `example`. */
export const message = <P extends MessageParams>(definition: MessageDefinition<P>): MessageDefinition<P> => definition;

/** A code with its parameters and its English sentence, ready to store. */
export interface CodedText {
  code: string;
  params: MessageParams | null;
  /** The default-locale sentence, stored beside the code for readers that know no codes. */
  text: string;
}

type ParamsOf<D> = D extends MessageDefinition<infer P> ? P : never;
/** The parameters `say` takes for a definition: optional when it has none. */
export type ParamsArgument<D> = Record<string, never> extends ParamsOf<D> ? [params?: ParamsOf<D>] : [params: ParamsOf<D>];

/**
 * The coded text of `code` from `catalog` with `params`: what a processor hands the
 * engine (`ctx.progress.step(say(…))`) and what a failure carries.
 */
export function say<C extends MessageCatalog, K extends keyof C & string>(catalog: C, code: K, ...rest: ParamsArgument<C[K]>): CodedText {
  const definition = catalog[code];
  if (!definition) throw new Error(`no message ${code} in this catalog`);
  const params = (rest[0] ?? {}) as MessageParams;
  return { code, params: Object.keys(params).length > 0 ? params : null, text: definition.sentences[DEFAULT_LOCALE](params) };
}

/** A catalog declared twice over, or with a malformed code. */
export class MessageCatalogError extends Error {
  override readonly name = 'MessageCatalogError';
}

/**
 * One catalog from many. The same definition may come from several sources (a message
 * two kinds share); two different definitions of one code are refused.
 */
export function mergeCatalogs(...catalogs: readonly MessageCatalog[]): MessageCatalog {
  const merged: Record<string, MessageDefinition<any>> = {};
  for (const catalog of catalogs) {
    for (const [code, definition] of Object.entries(catalog)) {
      if (!MESSAGE_CODE_PATTERN.test(code)) throw new MessageCatalogError(`message code "${code}" is not dot-separated lowercase words`);
      const existing = merged[code];
      if (existing && existing !== definition) throw new MessageCatalogError(`message code ${code} is declared twice`);
      merged[code] = definition;
    }
  }
  return merged;
}

/**
 * The sentence for a stored code in `locale`. English is the sentence stored when the
 * message was written (exactly what the API always said); another locale is rendered
 * from the code and its parameters. A row without a code, an unknown code (a newer
 * server wrote it) or parameters that do not render fall back to the stored sentence.
 */
export function renderMessage(
  catalog: MessageCatalog,
  locale: Locale,
  stored: { code: string | null; params: unknown; text: string | null },
): string | null {
  if (locale === DEFAULT_LOCALE || stored.code === null) return stored.text;
  const definition = catalog[stored.code];
  if (!definition) return stored.text;
  const params = stored.params !== null && typeof stored.params === 'object' && !Array.isArray(stored.params) ? stored.params : {};
  try {
    const sentence = definition.sentences[locale](params as MessageParams);
    return typeof sentence === 'string' && sentence.length > 0 ? sentence : stored.text;
  } catch {
    return stored.text;
  }
}
