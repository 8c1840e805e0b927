import type { Area } from '../../router';
import SessionPage from './SessionPage.vue';
import SessionsPage from './SessionsPage.vue';

export const routes: Area['routes'] = [
  { path: '/makeup-exams', component: SessionsPage, meta: { titleKey: 'makeup-exams:title' } },
  { path: '/makeup-exams/:sessionId', component: SessionPage, props: true, meta: { titleKey: 'makeup-exams:title' } },
];

export const nav: Area['nav'] = [{ to: '/makeup-exams', labelKey: 'makeup-exams:nav', order: 30 }];
