import { watch } from 'vue';
import { createRouter, createWebHistory, type RouteRecordRaw } from 'vue-router';
import { isSignedIn } from './auth/session';
import { currentLanguage, t } from './i18n';
import NotFound from './components/NotFound.vue';

/** A link in the page's main navigation. */
export interface NavEntry {
  to: string;
  /** A translation key, e.g. 'jobs:nav'. */
  labelKey: string;
  /** Position among the entries, lowest first. */
  order: number;
}

/** What a `views/<area>/routes.ts` exports. */
export interface Area {
  routes: RouteRecordRaw[];
  nav?: NavEntry[];
}

declare module 'vue-router' {
  interface RouteMeta {
    /** Reachable without signing in (the sign-in page). */
    public?: boolean;
    /** Translation key of the page's title. */
    titleKey?: string;
  }
}

/** Every `views/<area>/routes.ts`: an area adds its pages and links without touching this file. */
const areas = Object.values(import.meta.glob<Area>('./views/*/routes.ts', { eager: true }));

export const navEntries: NavEntry[] = areas.flatMap((a) => a.nav ?? []).sort((a, b) => a.order - b.order);

export const router = createRouter({
  history: createWebHistory('/'),
  routes: [
    { path: '/', redirect: '/jobs' },
    ...areas.flatMap((a) => a.routes),
    { path: '/:rest(.*)*', component: NotFound, meta: { titleKey: 'notFound.title' } },
  ],
});

router.beforeEach((to) => {
  if (!to.meta.public && !isSignedIn()) return { path: '/sign-in', query: { next: to.fullPath } };
  return true;
});

/** The tab's title: the page's, in the page's language. */
const setTitle = () => {
  const meta = router.currentRoute.value.meta;
  document.title = meta.titleKey ? `${t(meta.titleKey)} · ${t('app.title')}` : t('app.title');
};
router.afterEach(setTitle);
// A switch of language re-renders the page; the title is outside it.
watch(() => currentLanguage(), setTitle);
