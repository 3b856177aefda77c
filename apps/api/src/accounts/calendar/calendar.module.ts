import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts.module';
import { CalendarActionsTool, CalendarMode } from './calendar-actions.tool';

/**
 * The calendar mode and its tool: the events of a CalDAV account (tsdav for
 * the protocol, ical.js for iCalendar), in the owner's time zone.
 */
@Module({
  imports: [AccountsModule],
  providers: [CalendarMode, CalendarActionsTool],
})
export class CalendarModule {}
