import { message, type MessageCatalog } from '../i18n/message-catalog';
import { Locale } from '../i18n/locale';

/**
 * The engine's own messages, the same for every kind: a job's life (queued, started,
 * retried, cancelled, failed). Codes start with `job.`; the SQL statements that write
 * a message write its code beside it, and the runner takes its sentences from here.
 */
export const ENGINE_MESSAGES = {
  'job.queued': message({
    description: 'A new job waits for a worker.',
    example: {},
    sentences: { [Locale.EN]: () => 'Waiting for a worker', [Locale.ZH_CN]: () => '等待执行' },
  }),
  'job.started': message({
    description: 'A worker started the job.',
    example: {},
    sentences: { [Locale.EN]: () => 'Started', [Locale.ZH_CN]: () => '已开始' },
  }),
  'job.attempt-started': message({
    description: 'A worker started attempt `attempt` (2 or more) of the job.',
    example: { attempt: 2 },
    sentences: { [Locale.EN]: (p) => `Attempt ${p.attempt} started`, [Locale.ZH_CN]: (p) => `第 ${p.attempt} 次尝试已开始` },
  }),
  'job.completed': message({
    description: 'The job succeeded.',
    example: {},
    sentences: { [Locale.EN]: () => 'Completed', [Locale.ZH_CN]: () => '已完成' },
  }),
  'job.cancel-requested': message({
    description: 'Cancellation was asked for; the running job stops at its next check.',
    example: {},
    sentences: { [Locale.EN]: () => 'Cancellation requested', [Locale.ZH_CN]: () => '已请求取消' },
  }),
  'job.cancelled-before-start': message({
    description: 'The job was cancelled while it waited.',
    example: {},
    sentences: { [Locale.EN]: () => 'Cancelled before it started', [Locale.ZH_CN]: () => '已在开始前取消' },
  }),
  'job.cancelled': message({
    description: 'The running job stopped after a cancellation.',
    example: {},
    sentences: { [Locale.EN]: () => 'Cancelled', [Locale.ZH_CN]: () => '已取消' },
  }),
  'job.failed': message({
    description:
      'The job failed. As a message: the job ended FAILED. As an error code: a failure the job kind did not describe (the English error message keeps its text; other languages say only that it failed).',
    example: {},
    sentences: { [Locale.EN]: () => 'Failed', [Locale.ZH_CN]: () => '任务失败' },
  }),
  'job.attempt-limit-reached': message({
    description: 'The job failed because it used up its `attemptLimit` attempts (a message).',
    example: { attemptLimit: 3 },
    sentences: { [Locale.EN]: () => 'Failed: attempt limit reached', [Locale.ZH_CN]: (p) => `失败：已达到最多尝试次数（${p.attemptLimit} 次）` },
  }),
  'job.attempts-exhausted': message({
    description: 'Error code: automatic retries stopped after `attemptLimit` attempts; fix the cause, then retry the job.',
    example: { attemptLimit: 3 },
    sentences: {
      [Locale.EN]: (p) => `Automatic retries stopped after ${p.attemptLimit} attempts; fix the cause, then retry the job`,
      [Locale.ZH_CN]: (p) => `已尝试 ${p.attemptLimit} 次仍未成功，自动重试已停止：请排除原因后重试该任务`,
    },
  }),
  'job.retry-scheduled': message({
    description: 'Attempt `attempt` failed; the job is tried again in `retryInSeconds` seconds.',
    example: { attempt: 1, retryInSeconds: 2 },
    sentences: {
      [Locale.EN]: (p) => `Attempt ${p.attempt} failed; retrying in ${p.retryInSeconds} s`,
      [Locale.ZH_CN]: (p) => `第 ${p.attempt} 次尝试失败，${p.retryInSeconds} 秒后重试`,
    },
  }),
  'job.interrupted-by-shutdown': message({
    description: 'The worker running the job shut down; another worker takes it over.',
    example: {},
    sentences: {
      [Locale.EN]: () => 'Interrupted by a worker shutdown; waiting for another worker',
      [Locale.ZH_CN]: () => '执行进程已关闭，任务中断，等待其他进程接手',
    },
  }),
  'job.worker-lost': message({
    description: 'The worker running the job stopped responding; the job is tried again.',
    example: {},
    sentences: {
      [Locale.EN]: () => 'The worker running this job stopped responding; it will be retried',
      [Locale.ZH_CN]: () => '执行该任务的进程已无响应，任务将重试',
    },
  }),
  'job.retry-requested': message({
    description: 'Someone asked for a new attempt of a failed or cancelled job.',
    example: {},
    sentences: { [Locale.EN]: () => 'Retry requested; waiting for a worker', [Locale.ZH_CN]: () => '已请求重试，等待执行' },
  }),
} satisfies MessageCatalog;
