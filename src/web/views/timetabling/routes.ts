import type { Area } from '../../router';

// Loaded when first opened, so the jobs list's first load does not carry them.
const TermsPage = () => import('./TermsPage.vue');
const TermPage = () => import('./TermPage.vue');
const PublishedPage = () => import('./PublishedPage.vue');
const PlanPage = () => import('./PlanPage.vue');

export const routes: Area['routes'] = [
  { path: '/timetabling', component: TermsPage, meta: { titleKey: 'timetabling:title' } },
  { path: '/timetabling/terms/:termId', component: TermPage, props: true, meta: { titleKey: 'timetabling:title' } },
  { path: '/timetabling/terms/:termId/published', component: PublishedPage, props: true, meta: { titleKey: 'timetabling:title' } },
  { path: '/timetabling/plans/:planId', component: PlanPage, props: true, meta: { titleKey: 'timetabling:title' } },
];

export const nav: Area['nav'] = [{ to: '/timetabling', labelKey: 'timetabling:nav', order: 20 }];
