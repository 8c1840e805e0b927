import { exists, t } from './index';
import { ApiError } from '../api/client';
export { KIND_STEPS } from './kind-steps';

/**
 * Job text in the page's language. The API gives each step and message a stable code
 * with parameters (`currentStepCode`, `messageCode` + `messageParams`); the page
 * translates the codes it knows (i18n/common.ts) and shows the server's sentence for any
 * other (the server writes it in the language the page asked for).
 */

export interface StepLike {
  currentStep: string | null;
  currentStepCode: string | null;
}

/** A step's key for the timeline: its code, else (a step written without one) its sentence. */
export const stepKey = (job: StepLike): string | null => job.currentStepCode ?? job.currentStep;

/** A step in the page's language: its code's translation, else the server's sentence. */
export function stepLabel(job: StepLike): string {
  const code = job.currentStepCode;
  if (code && exists(`steps.${code}`)) return t(`steps.${code}`);
  return job.currentStep ?? code ?? '';
}

/** The label of a timeline entry (a code, or the sentence of a step that had none). */
export const stepKeyLabel = (key: string): string => (exists(`steps.${key}`) ? t(`steps.${key}`) : key);

export interface MessageLike {
  message: string | null;
  messageCode: string | null;
  messageParams: unknown;
}

const paramsOf = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/** A progress message in the page's language: its code's translation with its parameters, else the server's sentence. */
export function messageLabel(event: MessageLike): string {
  const params = paramsOf(event.messageParams);
  if (event.messageCode === 'solver.progress' && params.bestPenalty === null) return t('messages.solver.progressNone', params);
  if (event.messageCode && exists(`messages.${event.messageCode}`)) return t(`messages.${event.messageCode}`, params);
  return event.message ?? '';
}

/** The solver's best penalty so far (`solver.progress`'s `bestPenalty`), or null. */
export function bestPenalty(event: MessageLike): number | null {
  if (event.messageCode !== 'solver.progress') return null;
  const value = paramsOf(event.messageParams).bestPenalty;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** An API error for people: the code's translation (with the server's message where it says more). */
export function errorText(error: unknown): string {
  const code = error instanceof ApiError ? error.code : 'unknown';
  const message = error instanceof Error ? error.message : String(error);
  return exists(`errors.${code}`) ? t(`errors.${code}`, { message }) : t('errors.unknown', { message });
}

/** "3 min ago" in the page's language. */
export function age(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 90) return t('time.secondsAgo', { count: seconds });
  if (seconds < 90 * 60) return t('time.minutesAgo', { count: Math.round(seconds / 60) });
  if (seconds < 36 * 3600) return t('time.hoursAgo', { count: Math.round(seconds / 3600) });
  return t('time.daysAgo', { count: Math.round(seconds / 86400) });
}
