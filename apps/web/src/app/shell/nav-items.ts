import type { IconName } from '../ui/icon';

/** One entry of the shell's navigation. Each page of the console adds exactly one. */
export interface NavItem {
  /** Stable id; the link gets `data-testid="nav-<id>"`. */
  id: string;
  label: string;
  path: string;
  icon: IconName;
}

export const NAV_ITEMS: readonly NavItem[] = [
  { id: 'chat', label: 'Chat', path: '/chat', icon: 'chat' },
  {
    id: 'automations',
    label: 'Automations',
    path: '/automations',
    icon: 'schedule',
  },
  { id: 'tools', label: 'Tools', path: '/tools', icon: 'build' },
  { id: 'channels', label: 'Channels', path: '/channels', icon: 'forum' },
  { id: 'accounts', label: 'Accounts', path: '/accounts', icon: 'mail' },
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
