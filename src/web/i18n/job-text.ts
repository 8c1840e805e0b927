import { exists, t } from './index';
import { ApiError } from '../api/client';

/**
 * The English sentences the engine's kinds name their steps with, to the page's step
 * codes: for a server that sends only the sentence (`currentStep`). A code from the API
 * (`currentStepCode`) is used as is.
 */
const STEP_CODES: Record<string, string> = {
  'Loading the term': 'schedule.loading',
  'Building the model': 'schedule.building',
  Constructing: 'schedule.constructing',
  Optimising: 'schedule.optimising',
  'Saving the plan': 'schedule.saving',
  'Validating the plan': 'publish.validating',
  'Publishing the plan': 'publish.publishing',
  'Collecting failed enrolments': 'makeup.collecting',
  'Building the conflict graph': 'makeup.building',
  'Assigning periods and rooms': 'makeup.assigning',
  'Assigning invigilators': 'makeup.invigilators',
  'Saving the arrangement': 'makeup.saving',
};

/** The steps of each kind in order (the job page's timeline); a kind not here shows the steps it has been seen in. */
export const KIND_STEPS: Record<string, readonly string[]> = {
  AUTOMATIC_SCHEDULE: ['schedule.loading', 'schedule.building', 'schedule.constructing', 'schedule.optimising', 'schedule.saving'],
  SCHEDULE_PUBLISH: ['publish.validating', 'publish.publishing'],
  MAKEUP_EXAM_AUTO: ['makeup.collecting', 'makeup.building', 'makeup.assigning', 'makeup.optimising', 'makeup.invigilators', 'makeup.saving'],
};

export interface StepLike {
  kind?: string;
  currentStep: string | null;
  currentStepCode?: string | null;
}

/** A step's code: the API's, else the one its sentence maps to (per kind for sentences several kinds use), else null. */
export function stepCode(job: StepLike): string | null {
  if (job.currentStepCode) return job.currentStepCode;
  const sentence = job.currentStep;
  if (!sentence) return null;
  if (sentence === 'Optimising' && job.kind === 'MAKEUP_EXAM_AUTO') return 'makeup.optimising';
  if (STEP_CODES[sentence]) return STEP_CODES[sentence];
  const numbered = /^step (\d+)$/.exec(sentence);
  return numbered ? `test:${numbered[1]}` : null;
}

/** A step in the page's language: its code's translation, else the server's sentence. */
export function stepLabel(codeOrJob: string | null | StepLike, sentence: string | null = null): string {
  const code = typeof codeOrJob === 'string' || codeOrJob === null ? codeOrJob : stepCode(codeOrJob);
  const fallback = typeof codeOrJob === 'object' && codeOrJob !== null ? codeOrJob.currentStep : sentence;
  if (code?.startsWith('test:')) return t('steps.test', { n: code.slice(5) });
  if (code && exists(`steps.${code}`)) return t(`steps.${code}`);
  return fallback ?? code ?? '';
}

export interface MessageLike {
  message: string | null;
  messageCode?: string | null;
  messageParams?: unknown;
}

/** A progress message in the page's language: its code's translation with its parameters, else the sentence. */
export function messageLabel(event: MessageLike): string {
  const params = event.messageParams && typeof event.messageParams === 'object' ? (event.messageParams as Record<string, unknown>) : {};
  if (event.messageCode && exists(`messages.${event.messageCode}`)) return t(`messages.${event.messageCode}`, params);
  return event.message ?? '';
}

/** The solver's best penalty so far: from the message's parameters, else read from its sentence. */
export function bestPenalty(event: MessageLike): number | null {
  const params = event.messageParams as { bestPenalty?: unknown } | null | undefined;
  if (params && typeof params.bestPenalty === 'number' && Number.isFinite(params.bestPenalty)) return params.bestPenalty;
  const match = /best (?:penalty|cost) (\d+(?:\.\d+)?)/.exec(event.message ?? '');
  return match ? Number(match[1]) : null;
}

/** An error for people: the code's translation (with the server's message where it says more). */
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
