import type { Area } from '../../router';

// Loaded when first opened, so the jobs list's first load does not carry them.
const SessionsPage = () => import('./SessionsPage.vue');
const SessionPage = () => import('./SessionPage.vue');

export const routes: Area['routes'] = [
  { path: '/makeup-exams', component: SessionsPage, meta: { titleKey: 'makeup-exams:title' } },
  { path: '/makeup-exams/:sessionId', component: SessionPage, props: true, meta: { titleKey: 'makeup-exams:title' } },
];

export const nav: Area['nav'] = [{ to: '/makeup-exams', labelKey: 'makeup-exams:nav', order: 30 }];
