import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import {
  ACCOUNT_KINDS,
  PASSWORD_MASK,
  type AccountKind,
  type AccountPreset,
  type AccountTestResult,
  type MailServerInput,
  type MailServerSettings,
  type MailServerView,
  type UpdateAccountRequest,
} from '@metatronos/shared-types';
import { OptionalField } from '../../http/optional-field';

/** A host name or an IP literal: letters, digits, dots, dashes, colons (IPv6); no scheme, path or user. */
const HOST_PATTERN =
  /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[?[0-9A-Fa-f:.]+\]?$/;
const HOST_MESSAGE =
  'host must be a server name or IP address (like imap.example.com), without scheme or port';
const SECURE_HELP =
  'true (default) = TLS from the first byte (IMAPS 993, SMTPS 465); false = plain, upgraded with STARTTLS when the server offers it: chosen explicitly only';

/** One mail server in a create body (IMAP or SMTP). */
export class MailServerInputDto implements MailServerInput {
  @ApiProperty({ example: 'imap.fastmail.com', maxLength: 253 })
  @IsString()
  @IsNotEmpty({ message: 'host must not be empty' })
  @MaxLength(253)
  @Matches(HOST_PATTERN, { message: HOST_MESSAGE })
  host!: string;

  @ApiProperty({ example: 993, minimum: 1, maximum: 65535 })
  @IsInt({ message: 'port must be a whole number from 1 to 65535' })
  @Min(1, { message: 'port must be a whole number from 1 to 65535' })
  @Max(65535, { message: 'port must be a whole number from 1 to 65535' })
  port!: number;

  @ApiPropertyOptional({ default: true, description: SECURE_HELP })
  @OptionalField()
  @IsBoolean()
  secure!: boolean;

  @ApiProperty({ example: 'ann@fastmail.com', maxLength: 320 })
  @IsString()
  @IsNotEmpty({ message: 'user must not be empty' })
  @MaxLength(320)
  user!: string;

  @ApiProperty({
    example: 'app-password',
    maxLength: 1024,
    description: 'Stored on this machine only; never shown again',
  })
  @IsString()
  @IsNotEmpty({ message: 'password must not be empty' })
  @MaxLength(1024)
  password!: string;
}

/** One mail server in a PATCH body: any subset of the fields. */
export class MailServerPatchDto implements Partial<MailServerInput> {
  @ApiPropertyOptional({ maxLength: 253 })
  @OptionalField()
  @IsString()
  @IsNotEmpty({ message: 'host must not be empty' })
  @MaxLength(253)
  @Matches(HOST_PATTERN, { message: HOST_MESSAGE })
  host?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 65535 })
  @OptionalField()
  @IsInt({ message: 'port must be a whole number from 1 to 65535' })
  @Min(1, { message: 'port must be a whole number from 1 to 65535' })
  @Max(65535, { message: 'port must be a whole number from 1 to 65535' })
  port?: number;

  @ApiPropertyOptional({ description: SECURE_HELP })
  @OptionalField()
  @IsBoolean()
  secure?: boolean;

  @ApiPropertyOptional({ maxLength: 320 })
  @OptionalField()
  @IsString()
  @IsNotEmpty({ message: 'user must not be empty' })
  @MaxLength(320)
  user?: string;

  @ApiPropertyOptional({
    maxLength: 1024,
    description: `Omitted or "${PASSWORD_MASK}": the stored password stays`,
  })
  @OptionalField()
  @IsString()
  @IsNotEmpty({ message: 'password must not be empty' })
  @MaxLength(1024)
  password?: string;
}

/** A field of one kind is checked for that kind, and whenever it is sent (so `null` is refused by name). */
const isEmail = (o: { kind?: unknown }, value: unknown) =>
  o.kind === 'email' || value !== undefined;
const isCalendar = (o: { kind?: unknown }, value: unknown) =>
  o.kind === 'calendar' || value !== undefined;

/**
 * `POST /api/accounts` and `POST /api/accounts/test`: an email account (IMAP + SMTP)
 * or a calendar account (CalDAV), by `kind`. Fields of the other kind are refused.
 */
export class CreateAccountDto {
  @ApiProperty({ enum: ACCOUNT_KINDS })
  @IsIn(ACCOUNT_KINDS as unknown as string[], {
    message: `kind must be one of: ${ACCOUNT_KINDS.join(', ')}`,
  })
  kind!: AccountKind;

  @ApiProperty({ example: 'Work', maxLength: 100 })
  @IsString()
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(100)
  name!: string;

  @ApiPropertyOptional({
    example: 'ann@example.com',
    description: 'Email: the mailbox address (the From of what is sent)',
  })
  @ValidateIf(isEmail)
  @IsEmail({}, { message: 'address must be an email address' })
  @MaxLength(320)
  address?: string;

  @ApiPropertyOptional({ type: MailServerInputDto, description: 'Email only' })
  @ValidateIf(isEmail)
  @IsObject({
    message: 'imap must be an object with host, port, user and password',
  })
  @ValidateNested()
  @Type(() => MailServerInputDto)
  imap?: MailServerInputDto;

  @ApiPropertyOptional({ type: MailServerInputDto, description: 'Email only' })
  @ValidateIf(isEmail)
  @IsObject({
    message: 'smtp must be an object with host, port, user and password',
  })
  @ValidateNested()
  @Type(() => MailServerInputDto)
  smtp?: MailServerInputDto;

  @ApiPropertyOptional({
    example: 'https://caldav.fastmail.com/',
    description:
      'Calendar only: the CalDAV server (or principal) URL; calendars are discovered from it',
  })
  @ValidateIf(isCalendar)
  @IsString()
  @IsNotEmpty({ message: 'url must not be empty' })
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ description: 'Calendar only: the login' })
  @ValidateIf(isCalendar)
  @IsString()
  @IsNotEmpty({ message: 'user must not be empty' })
  @MaxLength(320)
  user?: string;

  @ApiPropertyOptional({ description: 'Calendar only; never shown again' })
  @ValidateIf(isCalendar)
  @IsString()
  @IsNotEmpty({ message: 'password must not be empty' })
  @MaxLength(1024)
  password?: string;

  @ApiPropertyOptional({
    default: true,
    description:
      'Calendar only: false allows a plain http:// URL (the password then travels unencrypted)',
  })
  @OptionalField()
  @IsBoolean()
  secure?: boolean;
}

/** `PATCH /api/accounts/:id`: any subset of the fields of the account's kind. */
export class UpdateAccountDto implements UpdateAccountRequest {
  @ApiPropertyOptional({ maxLength: 100 })
  @OptionalField()
  @IsString()
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(100)
  name?: string;

  @ApiPropertyOptional({ description: 'Email only' })
  @OptionalField()
  @IsEmail({}, { message: 'address must be an email address' })
  @MaxLength(320)
  address?: string;

  @ApiPropertyOptional({ type: MailServerPatchDto, description: 'Email only' })
  @OptionalField()
  @IsObject({ message: 'imap must be an object' })
  @ValidateNested()
  @Type(() => MailServerPatchDto)
  imap?: MailServerPatchDto;

  @ApiPropertyOptional({ type: MailServerPatchDto, description: 'Email only' })
  @OptionalField()
  @IsObject({ message: 'smtp must be an object' })
  @ValidateNested()
  @Type(() => MailServerPatchDto)
  smtp?: MailServerPatchDto;

  @ApiPropertyOptional({ description: 'Calendar only' })
  @OptionalField()
  @IsString()
  @IsNotEmpty({ message: 'url must not be empty' })
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ description: 'Calendar only' })
  @OptionalField()
  @IsString()
  @IsNotEmpty({ message: 'user must not be empty' })
  @MaxLength(320)
  user?: string;

  @ApiPropertyOptional({
    description: `Calendar only; omitted or "${PASSWORD_MASK}": the stored password stays`,
  })
  @OptionalField()
  @IsString()
  @IsNotEmpty({ message: 'password must not be empty' })
  @MaxLength(1024)
  password?: string;

  @ApiPropertyOptional({ description: 'Calendar only' })
  @OptionalField()
  @IsBoolean()
  secure?: boolean;
}

export class MailServerViewDto implements MailServerView {
  @ApiProperty() host!: string;
  @ApiProperty() port!: number;
  @ApiProperty() secure!: boolean;
  @ApiProperty() user!: string;
  @ApiProperty({ example: PASSWORD_MASK, description: 'Always the mask' })
  password!: string;
}

/** An account as every response shows it (passwords masked). */
export class AccountViewDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ACCOUNT_KINDS }) kind!: AccountKind;
  @ApiProperty() name!: string;
  @ApiProperty({
    description: 'Email: the mailbox address; calendar: the user name',
  })
  address!: string;
  @ApiPropertyOptional({ type: MailServerViewDto, description: 'Email only' })
  imap?: MailServerViewDto;
  @ApiPropertyOptional({ type: MailServerViewDto, description: 'Email only' })
  smtp?: MailServerViewDto;
  @ApiPropertyOptional({ description: 'Calendar only' }) url?: string;
  @ApiPropertyOptional({ description: 'Calendar only' }) user?: string;
  @ApiPropertyOptional({
    example: PASSWORD_MASK,
    description: 'Calendar only; always the mask',
  })
  password?: string;
  @ApiPropertyOptional({ description: 'Calendar only' }) secure?: boolean;
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;
}

class MailServerPresetDto implements Omit<MailServerSettings, 'user'> {
  @ApiProperty() host!: string;
  @ApiProperty() port!: number;
  @ApiProperty() secure!: boolean;
}

export class AccountPresetDto implements AccountPreset {
  @ApiProperty() id!: string;
  @ApiProperty() label!: string;
  @ApiProperty({ enum: ACCOUNT_KINDS }) kind!: AccountKind;
  @ApiPropertyOptional({ type: MailServerPresetDto })
  imap?: MailServerPresetDto;
  @ApiPropertyOptional({ type: MailServerPresetDto })
  smtp?: MailServerPresetDto;
  @ApiPropertyOptional({
    description: 'CalDAV URL; `{user}` stands for the user name',
  })
  url?: string;
  @ApiPropertyOptional() note?: string;
}

export class AccountTestResultDto implements AccountTestResult {
  @ApiProperty({ enum: [true] }) ok!: true;
  @ApiProperty({ example: 'IMAP and SMTP logins succeeded' }) detail!: string;
}
