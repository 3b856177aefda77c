import type { IconName } from '../ui/icon';

/** One entry of the shell's navigation. Each page of the console adds exactly one. */
export interface NavItem {
  /** Stable id; the link gets `data-testid="nav-<id>"`. */
  id: string;
  label: string;
  path: string;
  icon: IconName;
  /** What waits for the owner behind the entry: its count shows as a badge. */
  badge?: NavBadge;
}

/** The lists that put a count on their navigation entry. */
export type NavBadge = 'drafts' | 'actions';

export const NAV_ITEMS: readonly NavItem[] = [
  { id: 'chat', label: 'Chat', path: '/chat', icon: 'chat' },
  {
    id: 'actions',
    label: 'Pending actions',
    path: '/actions',
    icon: 'pendingActions',
    badge: 'actions',
  },
  {
    id: 'automations',
    label: 'Automations',
    path: '/automations',
    icon: 'schedule',
  },
  { id: 'tools', label: 'Tools', path: '/tools', icon: 'build' },
  { id: 'channels', label: 'Channels', path: '/channels', icon: 'forum' },
  {
    id: 'accounts',
    label: 'Accounts',
    path: '/accounts',
    icon: 'mail',
    badge: 'drafts',
  },
  { id: 'memory', label: 'Memory', path: '/memory', icon: 'history' },
  {
    id: 'instruction',
    label: 'Instruction',
    path: '/instruction',
    icon: 'description',
  },
  { id: 'data', label: 'Data', path: '/data', icon: 'tableChart' },
  { id: 'files', label: 'Files', path: '/files', icon: 'folder' },
  { id: 'usage', label: 'Usage', path: '/usage', icon: 'barChart' },
  { id: 'settings', label: 'Settings', path: '/settings', icon: 'settings' },
  { id: 'system', label: 'System', path: '/system', icon: 'dns' },
];
