import type { Area } from '../../router';
import JobsList from './JobsList.vue';
import JobPage from './JobPage.vue';

export const routes: Area['routes'] = [
  { path: '/jobs', component: JobsList, meta: { titleKey: 'jobs:title' } },
  { path: '/jobs/:id', component: JobPage, props: true, meta: { titleKey: 'jobs:title' } },
];

export const nav: Area['nav'] = [{ to: '/jobs', labelKey: 'jobs:nav', order: 10 }];
