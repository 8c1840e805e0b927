import { createApp } from 'vue';
import App from './App.vue';
import { closeSocket } from './api/client';
import { restoreSession, whenSignedOut } from './auth/session';
import './i18n';
import { router } from './router';
import './styles.css';

restoreSession();
whenSignedOut(() => {
  closeSocket();
  void router.push({ path: '/sign-in', query: { next: router.currentRoute.value.fullPath } });
});
createApp(App).use(router).mount('#app');
