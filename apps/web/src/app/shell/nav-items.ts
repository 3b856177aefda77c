import type { IconName } from '../ui/icon';

/** One entry of the shell's navigation. Each page of the console adds exactly one. */
export interface NavItem {
  /** Stable id; the link gets `data-testid="nav-<id>"`. */
  id: string;
  label: string;
  path: string;
  icon: IconName;
}

export const NAV_ITEMS: readonly NavItem[] = [{ id: 'system', label: 'System', path: '/system', icon: 'dns' }];
