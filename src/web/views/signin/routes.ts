import type { Area } from '../../router';
import SignIn from './SignIn.vue';

export const routes: Area['routes'] = [{ path: '/sign-in', component: SignIn, meta: { public: true, titleKey: 'signIn.title' } }];
