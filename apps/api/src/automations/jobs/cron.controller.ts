import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type {
  CronJobView,
  CronPreview,
  CronRunView,
} from '@metatronos/shared-types';
import { CronJobsService } from './cron-jobs.service';
import {
  CreateCronJobDto,
  CronJobDto,
  CronPreviewDto,
  CronPreviewQueryDto,
  CronRunDto,
  RunsQueryDto,
  UpdateCronJobDto,
} from './dto/cron-job.dto';

export const DEFAULT_RUNS_PAGE = 20;

@ApiTags('automations')
@Controller('cronjobs')
export class CronController {
  constructor(private readonly jobs: CronJobsService) {}

  @Get()
  @ApiOperation({ summary: 'All scheduled jobs, in the order they were made' })
  @ApiOkResponse({ type: [CronJobDto] })
  list(): Promise<CronJobView[]> {
    return this.jobs.list();
  }

  @Post()
  @ApiOperation({ summary: 'Create a job and its chat' })
  @ApiCreatedResponse({ type: CronJobDto })
  @ApiBadRequestResponse({
    description:
      'Missing or too long fields, an invalid expression, one that fires more than once a minute, or MAX_CRONJOBS jobs exist already',
  })
  create(@Body() body: CreateCronJobDto): Promise<CronJobView> {
    return this.jobs.create(body, 'owner');
  }

  @Get('preview')
  @ApiOperation({
    summary:
      "Check an expression: its description and next runs in the owner's timezone, or why it is refused",
  })
  @ApiOkResponse({ type: CronPreviewDto })
  preview(@Query() query: CronPreviewQueryDto): Promise<CronPreview> {
    return this.jobs.preview(query.cronExpression);
  }

  @Get(':id')
  @ApiOkResponse({ type: CronJobDto })
  @ApiNotFoundResponse({ description: 'No such job' })
  get(@Param('id') id: string): Promise<CronJobView> {
    return this.jobs.get(id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Edit a job; `{ enabled: false }` pauses it' })
  @ApiOkResponse({ type: CronJobDto })
  @ApiBadRequestResponse({ description: 'Invalid fields (nothing is changed)' })
  @ApiNotFoundResponse({ description: 'No such job' })
  update(
    @Param('id') id: string,
    @Body() body: UpdateCronJobDto,
  ): Promise<CronJobView> {
    return this.jobs.update(id, body, 'owner');
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Delete a job, its own chat and its run history (a running run is stopped); a malformed stored job is deleted by its id, whatever its type',
  })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ description: 'No such job' })
  async remove(@Param('id') id: string): Promise<void> {
    await this.jobs.remove(id, 'owner');
  }

  @Post(':id/run')
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Run the job now (also when paused); answers once the run has started',
  })
  @ApiAcceptedResponse({ type: CronRunDto })
  @ApiConflictResponse({ description: 'The job is already running' })
  @ApiNotFoundResponse({ description: 'No such job' })
  run(@Param('id') id: string): Promise<CronRunView> {
    return this.jobs.runNow(id);
  }

  @Get(':id/runs')
  @ApiOperation({ summary: 'Run history, newest first' })
  @ApiOkResponse({ type: [CronRunDto] })
  @ApiNotFoundResponse({ description: 'No such job' })
  runs(
    @Param('id') id: string,
    @Query() query: RunsQueryDto,
  ): Promise<CronRunView[]> {
    return this.jobs.history(id, {
      limit: query.limit ?? DEFAULT_RUNS_PAGE,
      before: query.before,
    });
  }
}
