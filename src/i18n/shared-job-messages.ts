import { Locale } from './locale';
import { message, type MessageCatalog } from './message-catalog';

/**
 * Messages more than one job kind sends, declared once so that every kind means the
 * same by the code: a UI keys one translation (and one chart) on it.
 */
export const SHARED_JOB_MESSAGES = {
  'solver.progress': message({
    description:
      'A solver job optimising: `bestPenalty` is the soft penalty (or cost) of the best complete solution so far, null before there is one; `hardViolations` its hard-constraint violations; `moves` the search moves made. Make-up exam arrangements add `unplacedExams`. Sent about once a second; chart `bestPenalty` over time.',
    example: { bestPenalty: 42, hardViolations: 0, moves: 15000, unplacedExams: 0 } as {
      bestPenalty: number | null;
      hardViolations: number;
      moves: number;
      unplacedExams?: number;
    },
    sentences: {
      [Locale.EN]: (p) => {
        const unplaced = p.unplacedExams ? p.unplacedExams : 0;
        if (p.bestPenalty === null) return `no complete solution yet${unplaced > 0 ? `, ${unplaced} exams to place` : ''}, ${p.moves} moves`;
        const hard = p.hardViolations > 0 ? `, ${p.hardViolations} hard violations` : '';
        return `best penalty ${p.bestPenalty}${hard}${unplaced > 0 ? `, ${unplaced} exams unplaced` : ''}, ${p.moves} moves`;
      },
      [Locale.ZH_CN]: (p) => {
        const unplaced = p.unplacedExams ? p.unplacedExams : 0;
        if (p.bestPenalty === null) return `尚无完整解${unplaced > 0 ? `，${unplaced} 场考试待安排` : ''}，已搜索 ${p.moves} 步`;
        const hard = p.hardViolations > 0 ? `，硬约束冲突 ${p.hardViolations} 处` : '';
        return `当前最优罚分 ${p.bestPenalty}${hard}${unplaced > 0 ? `，${unplaced} 场考试未安排` : ''}，已搜索 ${p.moves} 步`;
      },
    },
  }),
} satisfies MessageCatalog;
