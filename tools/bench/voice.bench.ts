// Voice calls (issue 26), against the fake OpenAI Realtime GA provider on loopback:
// - the time from a function-call event (the first of its three announcements) on the control channel to
//   its `function_call_output` back at the provider, for a tool that does no I/O: p95 ≤ 20 ms;
// - what `POST /api/voice/calls` adds to the provider's own answer time (prompt, tools, chat, control
//   channel opened): p95 ≤ 30 ms.
// Exits non-zero on a miss. Run by `npm run bench voice`.
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  AiToolProvider,
  type AiTool,
} from '../../apps/api/src/ai-tools/ai-tool';
import { startFakeLlmServer } from '../fake-llm/fake-llm-server';
import { startFakeRealtimeServer } from '../fake-realtime/fake-realtime-server';
import { startBenchApp } from './in-process-app';

/** BENCH_SMOKE=1 (npm test): a few calls, no goal. */
const SMOKE = process.env['BENCH_SMOKE'] === '1';
const CALLS = SMOKE ? 10 : 300;
const STARTS = SMOKE ? 5 : 60;
const WARM_UP = SMOKE ? 2 : 10;
const TOOL_P95_MS = 20;
const START_P95_MS = 30;

/**
 * A tool that does no I/O, in the data mode: the default mode is full (6 tools at most). The call's first
 * use switches it there (a call to a tool exactly one mode holds), every later call runs in it.
 */
@AiToolProvider()
@Injectable()
class EchoTool implements AiTool {
  readonly name = 'bench_echo';
  readonly modes = ['data'];
  readonly description = 'Echoes its text';
  readonly schema = z.object({ text: z.string() });
  readonly promptLine = 'echo a text.';
  async execute({ text }: { text: string }): Promise<string> {
    return JSON.stringify({ echo: text });
  }
}

const OFFER = [
  'v=0',
  'o=- 1 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'a=rtpmap:111 opus/48000/2',
  'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
  '',
].join('\r\n');

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[
    Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)
  ];
}

function summary(values: number[]): string {
  return `median ${percentile(values, 50).toFixed(2)} ms, p95 ${percentile(values, 95).toFixed(2)} ms, max ${Math.max(...values).toFixed(2)} ms`;
}

async function main(): Promise<void> {
  const llm = await startFakeLlmServer();
  const realtime = await startFakeRealtimeServer();
  const api = await startBenchApp(llm, { providers: [EchoTool] });
  // After the bench app pointed OpenAI at the fake LLM: voice calls read the variable per call.
  process.env['OPENAI_BASE_URL'] = realtime.baseUrl;
  let missed = false;
  try {
    // What POST /api/voice/calls adds to the provider's own answer time.
    const added: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < STARTS + WARM_UP; i++) {
      const before = process.cpuUsage();
      const started = performance.now();
      const call = await api.call<{ callId: string }>(
        'POST',
        '/api/voice/calls',
        {
          sdp: OFFER,
        },
      );
      const total = performance.now() - started;
      const used = process.cpuUsage(before);
      const answered = realtime.calls.find((c) => c.callId === call.callId);
      if (i >= WARM_UP && answered) {
        added.push(total - answered.answerMs);
        cpu.push((used.user + used.system) / 1000);
      }
      await api.call('DELETE', `/api/voice/calls/${call.callId}`);
    }
    console.log(
      `POST /api/voice/calls beyond the provider's own answer time: ${summary(added)} over ${STARTS} calls (CPU of the whole process per start: median ${percentile(cpu, 50).toFixed(1)} ms)`,
    );
    if (percentile(added, 95) > START_P95_MS) {
      console.log(`!! p95 over ${START_P95_MS} ms`);
      missed = true;
    }

    // Function-call event → function_call_output, for a tool that does no I/O.
    const { callId } = await api.call<{ callId: string }>(
      'POST',
      '/api/voice/calls',
      {
        sdp: OFFER,
        mode: 'data',
      },
    );
    const control = await realtime.control(callId);
    const times: number[] = [];
    const toolCpu: number[] = [];
    for (let i = 0; i < CALLS + WARM_UP; i++) {
      const id = `call_${i}`;
      const seen = control.received.length;
      const before = process.cpuUsage();
      const started = performance.now();
      control.announceFunctionCall({
        callId: id,
        name: 'bench_echo',
        arguments: { text: `run ${i}` },
      });
      await control.waitFor(
        (e) =>
          e['type'] === 'conversation.item.create' &&
          (e['item'] as { call_id?: string })?.call_id === id,
      );
      const elapsed = performance.now() - started;
      const used = process.cpuUsage(before);
      // Let the response.create of this call arrive before the next one starts.
      await control.waitFor(
        (e) =>
          e['type'] === 'response.create' &&
          control.received.indexOf(e) >= seen,
      );
      if (i >= WARM_UP) {
        times.push(elapsed);
        toolCpu.push((used.user + used.system) / 1000);
      }
    }
    const outputs = control.received.filter(
      (e) => e['type'] === 'conversation.item.create',
    ).length;
    console.log(
      `function-call event → function_call_output (no-I/O tool): ${summary(times)} over ${CALLS} calls, each announced 3 times, ${outputs} outputs sent (CPU of the whole process per call: median ${percentile(toolCpu, 50).toFixed(2)} ms)`,
    );
    if (outputs !== CALLS + WARM_UP) {
      console.log(`!! expected ${CALLS + WARM_UP} outputs (one per call)`);
      missed = true;
    }
    if (percentile(times, 95) > TOOL_P95_MS) {
      console.log(`!! p95 over ${TOOL_P95_MS} ms`);
      missed = true;
    }
    await api.call('DELETE', `/api/voice/calls/${callId}`);
  } finally {
    await api.close();
    await realtime.close();
    await llm.close();
  }
  if (missed && !SMOKE) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
