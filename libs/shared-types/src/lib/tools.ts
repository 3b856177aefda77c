/** One tool of a mode on the Tools page. */
export interface ToolView {
  name: string;
  /** What the model reads about the tool. */
  description: string;
  /** Offered when its mode is active: available here and not switched off. */
  available: boolean;
  /** Why it is not available on this machine or with these settings (null when it is, or when only switched off). */
  reason: string | null;
  /** False when the owner switched it off (settings `disabledTools`). */
  enabled: boolean;
}

/** A mode: the tools a conversation loads with set_mode. */
export interface ModeView {
  name: string;
  /** One line. */
  description: string;
  /** The account kind the mode works on (email, calendar), when it needs one. */
  accountKind: string | null;
  tools: ToolView[];
}

/** `GET /api/tools`: the modes (default first) and their tools; `meta` are offered in every mode. */
export interface ToolsResponse {
  modes: ModeView[];
  meta: ToolView[];
}
