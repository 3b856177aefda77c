import type { Routes, UrlMatcher, UrlSegment } from '@angular/router';
import {
  loginPageGuard,
  ownerSessionChildGuard,
  ownerSessionGuard,
  setupPageGuard,
} from './auth/auth.guards';
import { unsavedChangesGuard } from './core/unsaved-changes';

/** Page title for the browser tab: "System · MetatronOS". */
export function pageTitle(page: string): string {
  return `${page} · MetatronOS`;
}

/**
 * Matches `/<path>` and `/<path>/<value>` with one route, so moving between them keeps the page component
 * (and its list) alive; the value arrives as the `param` input (undefined on the bare path).
 */
export function pathWithOptionalParam(path: string, param: string): UrlMatcher {
  return (segments: UrlSegment[]) => {
    if (
      segments.length === 0 ||
      segments.length > 2 ||
      segments[0].path !== path
    )
      return null;
    const posParams: Record<string, UrlSegment> = {};
    if (segments.length === 2) posParams[param] = segments[1];
    return { consumed: segments, posParams };
  };
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
      { path: '', pathMatch: 'full', redirectTo: 'chat' },
      {
        // `/chat` and `/chat/:id`
        matcher: pathWithOptionalParam('chat', 'id'),
        title: pageTitle('Chat'),
        loadComponent: () => import('./chat/chat-page').then((m) => m.ChatPage),
      },
      {
        path: 'actions',
        canDeactivate: [unsavedChangesGuard],
        title: pageTitle('Pending actions'),
        loadComponent: () =>
          import('./actions/actions-page').then((m) => m.ActionsPage),
      },
      {
        path: 'automations',
        canDeactivate: [unsavedChangesGuard],
        title: pageTitle('Automations'),
        loadComponent: () =>
          import('./automations/automations-page').then(
            (m) => m.AutomationsPage,
          ),
      },
      {
        path: 'tools',
        canDeactivate: [unsavedChangesGuard],
        title: pageTitle('Tools'),
        loadComponent: () =>
          import('./tools/tools-page').then((m) => m.ToolsPage),
      },
      {
        path: 'channels',
        title: pageTitle('Channels'),
        canDeactivate: [unsavedChangesGuard],
        loadComponent: () =>
          import('./channels/channels-page').then((m) => m.ChannelsPage),
      },
      {
        path: 'accounts',
        title: pageTitle('Accounts'),
        canDeactivate: [unsavedChangesGuard],
        loadComponent: () =>
          import('./accounts/accounts-page').then((m) => m.AccountsPage),
      },
      {
        path: 'memory',
        title: pageTitle('Memory'),
        loadComponent: () =>
          import('./memory/memory-page').then((m) => m.MemoryPage),
      },
      {
        path: 'instruction',
        canDeactivate: [unsavedChangesGuard],
        title: pageTitle('Instruction'),
        loadComponent: () =>
          import('./instruction/instruction-page').then(
            (m) => m.InstructionPage,
          ),
      },
      {
        // `/data` and `/data/:name`
        matcher: pathWithOptionalParam('data', 'name'),
        title: pageTitle('Data'),
        loadComponent: () => import('./data/data-page').then((m) => m.DataPage),
      },
      {
        path: 'files',
        title: pageTitle('Files'),
        loadComponent: () =>
          import('./files/files-page').then((m) => m.FilesPage),
      },
      {
        path: 'usage',
        title: pageTitle('Usage'),
        loadComponent: () =>
          import('./usage/usage-page').then((m) => m.UsagePage),
      },
      {
        path: 'settings',
        canDeactivate: [unsavedChangesGuard],
        title: pageTitle('Settings'),
        loadComponent: () =>
          import('./settings/settings-page').then((m) => m.SettingsPage),
      },
      {
        path: 'system',
        title: pageTitle('System'),
        loadComponent: () =>
          import('./system/system-page').then((m) => m.SystemPage),
      },
      {
        path: '**',
        title: pageTitle('Page not found'),
        loadComponent: () =>
          import('./shell/not-found').then((m) => m.NotFound),
      },
    ],
  },
];
