import { Controller, Get, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCookieAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { UsageQueryDto, UsageReportDto } from './dto/usage.dto';
import { UsageService } from './usage.service';

@ApiTags('usage')
@ApiCookieAuth()
@Controller('usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get()
  @ApiOperation({
    summary: 'Tokens used and their cost per day, model and source',
    description:
      "Input and output tokens as the providers reported them, counted per day in the owner's time zone. Sources: chat, job, pulse, auto-reply. `costUsd` prices the reported tokens with the model's price (Settings `modelPrices`, else the shipped one; 0 for an unpriced model).",
  })
  @ApiOkResponse({ type: UsageReportDto })
  @ApiBadRequestResponse({
    description:
      'A date not written YYYY-MM-DD, `from` after `to`, or a range over 366 days',
  })
  report(@Query() query: UsageQueryDto): Promise<UsageReportDto> {
    return this.usage.report(query);
  }
}
