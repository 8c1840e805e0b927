import { Course } from './course.entity';
import { Curriculum } from './curriculum.entity';
import { Room } from './room.entity';
import { Teacher } from './teacher.entity';
import { AcademicTerm } from './term.entity';
import { Unavailability } from './unavailability.entity';

export { AcademicTerm, Course, Curriculum, Room, Teacher, Unavailability };
export const academicEntities = [AcademicTerm, Teacher, Room, Course, Curriculum, Unavailability];
