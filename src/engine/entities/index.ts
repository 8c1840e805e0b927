import { JobEntity } from './job.entity';
import { OutboxMessageEntity } from './outbox-message.entity';

export { JobEntity, OutboxMessageEntity };
export const engineEntities = [JobEntity, OutboxMessageEntity];
