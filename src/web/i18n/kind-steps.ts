/**
 * The step codes of each kind in order, as the API names them (`currentStepCode`): the
 * job page's timeline. A kind not here shows the steps it has been seen in.
 * test/web/messages.test.ts checks them against the kinds' message catalogues.
 */
export const KIND_STEPS: Record<string, readonly string[]> = {
  AUTOMATIC_SCHEDULE: ['schedule.loading-term', 'schedule.building-model', 'schedule.constructing', 'schedule.optimising', 'schedule.saving'],
  SCHEDULE_PUBLISH: ['publish.validating', 'publish.publishing'],
  MAKEUP_EXAM_AUTO: ['makeup.collecting', 'makeup.building-graph', 'makeup.assigning-periods', 'makeup.optimising', 'makeup.assigning-invigilators', 'makeup.saving'],
};
