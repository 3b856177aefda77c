import { HttpClient, HttpParams } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import type { Observable } from 'rxjs';
import type { FileListing, TodoLists } from '@metatronos/shared-types';
import { API_BASE } from '../core/api-client';

/** The Files page's routes (`/api/files`). */
@Injectable({ providedIn: 'root' })
export class FilesApi {
  private readonly http = inject(HttpClient);

  list(path: string): Observable<FileListing> {
    const params = path ? new HttpParams().set('path', path) : undefined;
    return this.http.get<FileListing>(`${API_BASE}/files`, { params });
  }

  /** A text file's content (the server refuses binary and large files with 415 / 413). */
  text(path: string): Observable<string> {
    return this.http.get(`${API_BASE}/files/content`, {
      params: new HttpParams().set('path', path).set('inline', '1'),
      responseType: 'text',
    });
  }

  remove(path: string): Observable<void> {
    return this.http.delete<void>(`${API_BASE}/files`, {
      params: new HttpParams().set('path', path),
    });
  }

  todo(): Observable<TodoLists> {
    return this.http.get<TodoLists>(`${API_BASE}/files/todo`);
  }
}

/** The download link of a file (same origin: the session cookie goes along). */
export function downloadUrl(path: string): string {
  return `${API_BASE}/files/content?path=${encodeURIComponent(path)}`;
}

/** `file_state_dir/a/b.md` → the crumbs `file_state_dir`, `file_state_dir/a`, `file_state_dir/a/b.md`. */
export function breadcrumbs(
  path: string,
): Array<{ label: string; path: string }> {
  const parts = path.split('/').filter(Boolean);
  return parts.map((label, i) => ({
    label,
    path: parts.slice(0, i + 1).join('/'),
  }));
}

/** 0 → "0 B", 1536 → "1.5 KiB", 600 KiB → "600 KiB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 10 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}
