import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import {
  PULSE_NOTES_MAX_LENGTH,
  PULSES_PER_DAY_CHOICES,
  QUIET_HOURS_MAX_RANGES,
  type PulsesPerDay,
  type PulseView,
  type QuietHoursRange,
  type UpdatePulseRequest,
} from '@metatronos/shared-types';
import { OptionalField } from '../../../http/optional-field';

const HM = /^([01]\d|2[0-3]):[0-5]\d$/;

export class QuietHoursRangeDto implements QuietHoursRange {
  @ApiProperty({
    example: '22:00',
    description: 'HH:mm, local time, inclusive',
  })
  @IsString()
  @Matches(HM, { message: 'start must be a time like "22:00"' })
  start!: string;

  @ApiProperty({
    example: '07:00',
    description: 'HH:mm, exclusive; an end before the start crosses midnight',
  })
  @IsString()
  @Matches(HM, { message: 'end must be a time like "07:00"' })
  end!: string;
}

export class UpdatePulseDto implements UpdatePulseRequest {
  @ApiPropertyOptional()
  @OptionalField()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    type: [Number],
    example: [1, 2, 3, 4, 5],
    description: '0 = Sunday … 6 = Saturday',
  })
  @OptionalField()
  @IsArray()
  @ArrayMaxSize(7)
  @IsInt({
    each: true,
    message:
      'activeDays must be weekday numbers from 0 (Sunday) to 6 (Saturday)',
  })
  @Min(0, {
    each: true,
    message:
      'activeDays must be weekday numbers from 0 (Sunday) to 6 (Saturday)',
  })
  @Max(6, {
    each: true,
    message:
      'activeDays must be weekday numbers from 0 (Sunday) to 6 (Saturday)',
  })
  activeDays?: number[];

  @ApiPropertyOptional({ enum: PULSES_PER_DAY_CHOICES })
  @OptionalField()
  @IsIn(PULSES_PER_DAY_CHOICES, {
    message: `pulsesPerDay must be one of ${PULSES_PER_DAY_CHOICES.join(', ')}`,
  })
  pulsesPerDay?: PulsesPerDay;

  @ApiPropertyOptional({
    type: [QuietHoursRangeDto],
    maxItems: QUIET_HOURS_MAX_RANGES,
  })
  @OptionalField()
  @IsArray()
  @ArrayMaxSize(QUIET_HOURS_MAX_RANGES)
  @ValidateNested({ each: true })
  @Type(() => QuietHoursRangeDto)
  quietHours?: QuietHoursRangeDto[];

  @ApiPropertyOptional({
    description: `Continuity notes; cut to ${PULSE_NOTES_MAX_LENGTH} characters`,
  })
  @OptionalField()
  @IsString()
  notes?: string;

  @ApiPropertyOptional({
    example: 'automations',
    description: 'The mode every pulse starts in (one of GET /api/tools modes)',
  })
  @OptionalField()
  @IsString()
  mode?: string;
}

export class PulseDto implements PulseView {
  @ApiProperty()
  enabled!: boolean;
  @ApiProperty({ type: [Number] })
  activeDays!: number[];
  @ApiProperty({ enum: PULSES_PER_DAY_CHOICES })
  pulsesPerDay!: PulsesPerDay;
  @ApiProperty({ type: [QuietHoursRangeDto] })
  quietHours!: QuietHoursRange[];
  @ApiProperty()
  notes!: string;
  @ApiProperty({
    example: 'automations',
    description: 'The mode every pulse starts in',
  })
  mode!: string;
  @ApiProperty({ description: 'Pulses still planned today' })
  remaining!: number;
  @ApiProperty({ type: String, nullable: true })
  nextPulseAt!: string | null;
  @ApiProperty()
  intervalMinutes!: number;
  @ApiProperty({ description: "Pulses fired on the owner's local day" })
  pulsesToday!: number;
  @ApiProperty({ type: String, nullable: true })
  lastPulseAt!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The Pulse chat' })
  chatId!: string | null;
  @ApiProperty()
  running!: boolean;
  @ApiProperty()
  timezone!: string;
  @ApiProperty({ type: String, nullable: true })
  notesUpdatedAt!: string | null;
}
