import type { Area } from '../../router';
import PlanPage from './PlanPage.vue';
import PublishedPage from './PublishedPage.vue';
import TermPage from './TermPage.vue';
import TermsPage from './TermsPage.vue';

export const routes: Area['routes'] = [
  { path: '/timetabling', component: TermsPage, meta: { titleKey: 'timetabling:title' } },
  { path: '/timetabling/terms/:termId', component: TermPage, props: true, meta: { titleKey: 'timetabling:title' } },
  { path: '/timetabling/terms/:termId/published', component: PublishedPage, props: true, meta: { titleKey: 'timetabling:title' } },
  { path: '/timetabling/plans/:planId', component: PlanPage, props: true, meta: { titleKey: 'timetabling:title' } },
];

export const nav: Area['nav'] = [{ to: '/timetabling', labelKey: 'timetabling:nav', order: 20 }];
