import { ApiProperty } from '@nestjs/swagger';
import type { BudgetState, BudgetView } from '@metatronos/shared-types';
import { BudgetCapsDto } from '../settings/dto/update-settings.dto';

class BudgetSpentDto {
  @ApiProperty({ example: 0.42 })
  todayUsd!: number;
  @ApiProperty({ example: 3.1 })
  monthUsd!: number;
  @ApiProperty({ example: 0.12 })
  unattendedTodayUsd!: number;
}

class BudgetPauseDto {
  @ApiProperty()
  since!: string;
  @ApiProperty()
  reason!: string;
}

export class BudgetViewDto implements BudgetView {
  @ApiProperty({ type: BudgetCapsDto })
  caps!: BudgetCapsDto;
  @ApiProperty({ type: BudgetSpentDto })
  spent!: BudgetSpentDto;
  @ApiProperty({
    description: 'Worst-case cost held by the model calls under way',
  })
  reservedUsd!: number;
  @ApiProperty({
    type: BudgetPauseDto,
    nullable: true,
    description:
      "Unattended work paused after a provider's 402 / insufficient quota, until the next day or a resume",
  })
  paused!: BudgetPauseDto | null;
  @ApiProperty({ enum: ['ok', 'warning', 'exceeded', 'paused'] })
  state!: BudgetState;
  @ApiProperty({ example: '2026-11-28', description: "The owner's day" })
  day!: string;
  @ApiProperty({ example: '2026-11' })
  month!: string;
  @ApiProperty({
    description: "This month's spend projected to its end at the pace so far",
  })
  projectedMonthUsd!: number;
}
