import { MakeupExamArrangement } from './makeup-exam-arrangement.entity';
import { MakeupExamConstraint } from './makeup-exam-constraint.entity';
import { MakeupExamEnrolment } from './makeup-exam-enrolment.entity';
import { MakeupExamInvigilator } from './makeup-exam-invigilator.entity';
import { MakeupExamPeriod } from './makeup-exam-period.entity';
import { MakeupExamRoom } from './makeup-exam-room.entity';
import { DEFAULT_EXAM_DURATION, MakeupExamSession, MakeupExamSessionFormat } from './makeup-exam-session.entity';
import { MakeupExamSitting } from './makeup-exam-sitting.entity';
import { MakeupExam } from './makeup-exam.entity';

export {
  DEFAULT_EXAM_DURATION,
  MakeupExam,
  MakeupExamArrangement,
  MakeupExamConstraint,
  MakeupExamEnrolment,
  MakeupExamInvigilator,
  MakeupExamPeriod,
  MakeupExamRoom,
  MakeupExamSession,
  MakeupExamSessionFormat,
  MakeupExamSitting,
};
export const examEntities = [
  MakeupExamSession,
  MakeupExamPeriod,
  MakeupExamRoom,
  MakeupExamInvigilator,
  MakeupExam,
  MakeupExamEnrolment,
  MakeupExamConstraint,
  MakeupExamArrangement,
  MakeupExamSitting,
];
