import type { Routes } from '@angular/router';
import { loginPageGuard, ownerSessionChildGuard, ownerSessionGuard, setupPageGuard } from './auth/auth.guards';

/** Page title for the browser tab: "System · MetatronOS". */
export function pageTitle(page: string): string {
  return `${page} · MetatronOS`;
}

export const appRoutes: Routes = [
  {
    path: 'setup',
    title: pageTitle('Set up'),
    canActivate: [setupPageGuard],
    loadComponent: () => import('./auth/setup-page').then((m) => m.SetupPage),
  },
  {
    path: 'login',
    title: pageTitle('Log in'),
    canActivate: [loginPageGuard],
    loadComponent: () => import('./auth/login-page').then((m) => m.LoginPage),
  },
  {
    // Everything else lives in the shell and needs the owner's session.
    path: '',
    canActivate: [ownerSessionGuard],
    canActivateChild: [ownerSessionChildGuard],
    loadComponent: () => import('./shell/app-shell').then((m) => m.AppShell),
    children: [
      { path: '', pathMatch: 'full', redirectTo: 'system' },
      {
        path: 'system',
        title: pageTitle('System'),
        loadComponent: () => import('./system/system-page').then((m) => m.SystemPage),
      },
      {
        path: '**',
        title: pageTitle('Page not found'),
        loadComponent: () => import('./shell/not-found').then((m) => m.NotFound),
      },
    ],
  },
];
