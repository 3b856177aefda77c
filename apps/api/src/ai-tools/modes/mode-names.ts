/** "data" → "Data mode", as the chat's event line and tool results say it. */
export function modeLabel(mode: string): string {
  const words = mode.replace(/_/g, ' ');
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} mode`;
}
