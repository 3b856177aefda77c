import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { AiToolProvider, type AiTool } from '../../src/ai-tools/ai-tool';

/**
 * A tool of the data mode that does no I/O and counts its runs: a spec contributes it with
 * `createTestApp({ providers: [CountTool] })` to see a model's (or a voice call's) tool call arrive.
 */
@AiToolProvider()
@Injectable()
export class CountTool implements AiTool {
  readonly name = 'count_runs';
  readonly modes = ['data'];
  readonly description = 'Counts its runs';
  readonly schema = z.object({ label: z.string() });
  readonly promptLine = 'count a run.';
  runs: string[] = [];
  async execute({ label }: { label: string }): Promise<string> {
    this.runs.push(label);
    return JSON.stringify({ counted: label, total: this.runs.length });
  }
}
