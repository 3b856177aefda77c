/**
 * A turn sink for tests: records the streamed text and the tool calls, and answers each call
 * with a scripted JSON string. Structurally an `LlmTurnSink` (apps/api/src/llm/llm-adapter.ts).
 */
export interface RecordedToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** When the sink started / finished running the call (ms, `performance.now()`). */
  startedAt: number;
  endedAt: number | null;
}

export type ToolAnswer = (call: {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}) => string | Promise<string>;

export interface RecordingSink {
  onText(delta: string): void;
  executeTool(call: {
    id: string;
    name: string;
    arguments: Record<string, unknown>;
  }): Promise<string>;
  /** Every text delta, in order. */
  readonly deltas: string[];
  /** The deltas joined. */
  readonly text: string;
  readonly toolCalls: RecordedToolCall[];
  /** Called after each delta (e.g. to abort a turn once text arrived). */
  onDelta?: (delta: string) => void;
}

/** `answer` defaults to `{"ok":true}` for every call. */
export function createRecordingSink(
  answer: ToolAnswer = () => '{"ok":true}',
): RecordingSink {
  const deltas: string[] = [];
  const toolCalls: RecordedToolCall[] = [];
  const sink: RecordingSink = {
    deltas,
    toolCalls,
    get text() {
      return deltas.join('');
    },
    onText(delta) {
      deltas.push(delta);
      sink.onDelta?.(delta);
    },
    async executeTool(call) {
      const record: RecordedToolCall = {
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        startedAt: performance.now(),
        endedAt: null,
      };
      toolCalls.push(record);
      try {
        return await answer(call);
      } finally {
        record.endedAt = performance.now();
      }
    },
  };
  return sink;
}
