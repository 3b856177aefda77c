import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type {
  AccountPreset,
  AccountTestResult,
  AccountView,
} from '@metatronos/shared-types';
import { ACCOUNT_PRESETS } from './account-presets';
import { AccountsService } from './accounts.service';
import {
  AccountPresetDto,
  AccountTestResultDto,
  AccountViewDto,
  CreateAccountDto,
  MailServerInputDto,
  UpdateAccountDto,
} from './dto/account.dto';

const CONNECTION_FAILED =
  'The connection failed (wrong password, unreachable host, TLS mismatch…), said in plain words; nothing is stored';

@ApiTags('accounts')
@ApiExtraModels(MailServerInputDto)
@Controller('accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Get()
  @ApiOperation({
    summary: 'The email and calendar accounts, oldest first (passwords masked)',
  })
  @ApiOkResponse({ type: [AccountViewDto] })
  list(): Promise<AccountView[]> {
    return this.accounts.list();
  }

  @Get('presets')
  @ApiOperation({
    summary:
      'Server settings of common providers (host, port, TLS; CalDAV URL) to start the form from',
  })
  @ApiOkResponse({ type: [AccountPresetDto] })
  presets(): readonly AccountPreset[] {
    return ACCOUNT_PRESETS;
  }

  @Post()
  @ApiOperation({
    summary:
      'Add an account: the connection is tested first (IMAP and SMTP logins, or CalDAV discovery) and the account is stored only if it works',
  })
  @ApiCreatedResponse({ type: AccountViewDto })
  @ApiBadRequestResponse({ description: CONNECTION_FAILED })
  @ApiConflictResponse({
    description: 'The name, address or CalDAV login is taken',
  })
  create(@Body() body: CreateAccountDto): Promise<AccountView> {
    return this.accounts.create(body);
  }

  @Post('test')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Test an account before adding it (a create body); nothing is stored',
  })
  @ApiOkResponse({ type: AccountTestResultDto })
  @ApiBadRequestResponse({ description: CONNECTION_FAILED })
  test(@Body() body: CreateAccountDto): Promise<AccountTestResult> {
    return this.accounts.test(body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One account (passwords masked)' })
  @ApiOkResponse({ type: AccountViewDto })
  @ApiNotFoundResponse({ description: 'No such account' })
  get(@Param('id') id: string): Promise<AccountView> {
    return this.accounts.get(id);
  }

  @Post(':id/test')
  @HttpCode(200)
  @ApiOperation({ summary: 'Test a stored account’s connection now' })
  @ApiOkResponse({ type: AccountTestResultDto })
  @ApiBadRequestResponse({ description: CONNECTION_FAILED })
  @ApiNotFoundResponse({ description: 'No such account' })
  testStored(@Param('id') id: string): Promise<AccountTestResult> {
    return this.accounts.testStored(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      'Edit an account: an omitted or masked password keeps the stored one; a changed connection is tested before it is stored; moving a server or login needs its password again',
  })
  @ApiOkResponse({ type: AccountViewDto })
  @ApiBadRequestResponse({ description: CONNECTION_FAILED })
  @ApiNotFoundResponse({ description: 'No such account' })
  @ApiConflictResponse({
    description: 'The name, address or CalDAV login is taken',
  })
  update(
    @Param('id') id: string,
    @Body() body: UpdateAccountDto,
  ): Promise<AccountView> {
    return this.accounts.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove an account and its stored passwords' })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ description: 'No such account' })
  async remove(@Param('id') id: string): Promise<void> {
    await this.accounts.remove(id);
  }
}
