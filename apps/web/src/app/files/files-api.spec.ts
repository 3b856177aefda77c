import { breadcrumbs, downloadUrl, formatSize } from './files-api';

describe('files-api helpers', () => {
  it('makes one crumb per folder, each with its full path', () => {
    expect(breadcrumbs('')).toEqual([]);
    expect(breadcrumbs('file_state_dir/a/b.md')).toEqual([
      { label: 'file_state_dir', path: 'file_state_dir' },
      { label: 'a', path: 'file_state_dir/a' },
      { label: 'b.md', path: 'file_state_dir/a/b.md' },
    ]);
  });

  it('formats sizes in binary units', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(1536)).toBe('1.5 KiB');
    expect(formatSize(600 * 1024)).toBe('600 KiB');
    expect(formatSize(3 * 1024 * 1024 * 1024)).toBe('3.0 GiB');
  });

  it('encodes the path of a download link', () => {
    expect(downloadUrl('file_cache_dir/große datei?.txt')).toBe(
      '/api/files/content?path=file_cache_dir%2Fgro%C3%9Fe%20datei%3F.txt',
    );
  });
});
