import {
  Body,
  Controller,
  Get,
  HttpCode,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { CronRunView, PulseView } from '@metatronos/shared-types';
import { AutomationRunsService } from '../automation-runs.service';
import { CombinedPromptBuilder } from '../../system-instruction/combined-prompt.builder';
import { CombinedPromptDto } from '../../system-instruction/dto/system-instruction.dto';
import { CronRunDto, RunsQueryDto } from '../jobs/dto/cron-job.dto';
import { DEFAULT_RUNS_PAGE } from '../jobs/cron.controller';
import { Clock } from '../../clock/clock';
import { PulseDto, UpdatePulseDto } from './dto/pulse.dto';
import { pulsePromptOptions } from './pulse-prompt';
import { PulseScheduler } from './pulse-scheduler';
import { PulseService } from './pulse.service';

@ApiTags('automations')
@Controller('pulse')
export class PulseController {
  constructor(
    private readonly pulse: PulseService,
    private readonly scheduler: PulseScheduler,
    private readonly runs: AutomationRunsService,
    private readonly prompts: CombinedPromptBuilder,
    private readonly clock: Clock,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      'Pulse settings, notes and what the server computes (remaining today, next pulse, interval, counters)',
  })
  @ApiOkResponse({ type: PulseDto })
  get(): Promise<PulseView> {
    return this.pulse.view(this.scheduler.isRunning());
  }

  @Patch()
  @ApiOperation({
    summary:
      'Change any of enabled, activeDays, pulsesPerDay, quietHours, notes',
  })
  @ApiOkResponse({ type: PulseDto })
  @ApiBadRequestResponse({
    description: 'An invalid field (nothing is changed)',
  })
  async update(@Body() body: UpdatePulseDto): Promise<PulseView> {
    await this.pulse.update(body, 'owner');
    return this.pulse.view(this.scheduler.isRunning());
  }

  @Post('run')
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Run a pulse now (counts as one of today); answers once it has started',
  })
  @ApiAcceptedResponse({ type: CronRunDto })
  @ApiConflictResponse({ description: 'A pulse is already running' })
  run(): Promise<CronRunView> {
    return this.scheduler.runNow();
  }

  @Get('runs')
  @ApiOperation({ summary: 'Recent pulses, newest first' })
  @ApiOkResponse({ type: [CronRunDto] })
  runsPage(@Query() query: RunsQueryDto): Promise<CronRunView[]> {
    return this.runs.list('pulse', null, {
      limit: query.limit ?? DEFAULT_RUNS_PAGE,
      before: query.before,
    });
  }

  @Get('prompt')
  @ApiOperation({
    summary: 'The system prompt the next pulse would send (buildPulsePrompt)',
  })
  @ApiOkResponse({ type: CombinedPromptDto })
  async prompt(): Promise<{ prompt: string | null }> {
    const view = await this.pulse.view(true);
    return {
      prompt: await this.prompts.buildCombinedPrompt(
        pulsePromptOptions(view, this.clock.now()),
      ),
    };
  }
}
