import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { SettingsModule } from '../settings/settings.module';
import { UsageModule } from '../usage/usage.module';
import { BudgetController } from './budget.controller';
import { BudgetService } from './budget.service';
import {
  BudgetReservationRecord,
  BudgetReservationSchema,
  BudgetStateRecord,
  BudgetStateSchema,
} from './schemas/budget-records.schema';

/** Spend control: prices, caps and the reservation every model call makes (`/api/budget`). */
@Module({
  imports: [
    SettingsModule,
    UsageModule,
    MongooseModule.forFeature([
      { name: BudgetReservationRecord.name, schema: BudgetReservationSchema },
      { name: BudgetStateRecord.name, schema: BudgetStateSchema },
    ]),
  ],
  controllers: [BudgetController],
  providers: [BudgetService],
  exports: [BudgetService],
})
export class BudgetModule {}
