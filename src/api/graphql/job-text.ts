import type { Locale } from '../../i18n/locale';
import { renderMessage, type MessageCatalog } from '../../i18n/message-catalog';
import { jobMessageCatalog } from '../../job-kind-descriptors';

let catalog: MessageCatalog | undefined;

/** Every job message code the service declares (engine and kinds), read once. */
const messages = (): MessageCatalog => (catalog ??= jobMessageCatalog());

/** The fields of a job (or event) that hold coded sentences. */
export interface CodedJobFields {
  currentStep: string | null;
  currentStepCode?: string | null;
  message: string | null;
  messageCode?: string | null;
  messageParams?: unknown;
  errorMessage?: string | null;
  errorCode?: string | null;
  errorParams?: unknown;
}

/** A job's step, message and error in the request's locale (see `renderMessage`). */
export const stepIn = (job: CodedJobFields, locale: Locale) =>
  renderMessage(messages(), locale, { code: job.currentStepCode ?? null, params: null, text: job.currentStep });
export const messageIn = (job: CodedJobFields, locale: Locale) =>
  renderMessage(messages(), locale, { code: job.messageCode ?? null, params: job.messageParams ?? null, text: job.message });
export const errorIn = (job: CodedJobFields, locale: Locale) =>
  renderMessage(messages(), locale, { code: job.errorCode ?? null, params: job.errorParams ?? null, text: job.errorMessage ?? null });
