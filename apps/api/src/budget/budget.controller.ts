import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import {
  ApiCookieAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { BudgetViewDto } from './budget.dto';
import { BudgetService } from './budget.service';

@ApiTags('budget')
@ApiCookieAuth()
@Controller('budget')
export class BudgetController {
  constructor(private readonly budget: BudgetService) {}

  @Get()
  @ApiOperation({
    summary:
      'Spend caps, what is spent and held, and whether unattended work is paused',
    description:
      "Days and months are the owner's (Settings time zone). Caps are set with PATCH /api/settings `budget`.",
  })
  @ApiOkResponse({ type: BudgetViewDto })
  view(): Promise<BudgetViewDto> {
    return this.budget.view();
  }

  @Post('resume')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Resumes unattended work paused by a provider's 402 / insufficient quota",
  })
  @ApiOkResponse({ type: BudgetViewDto })
  resume(): Promise<BudgetViewDto> {
    return this.budget.resume();
  }
}
