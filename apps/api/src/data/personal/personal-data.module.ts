import { Module, type OnModuleInit } from '@nestjs/common';
import { InjectModel, MongooseModule } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { StartUpWork } from '../../database/start-up-work';
import { Contact, ContactSchema } from './schemas/contact.schema';
import { OwnerProfile, OwnerProfileSchema } from './schemas/master.schema';
import {
  ScheduleEntry,
  ScheduleEntrySchema,
} from './schemas/schedule-entry.schema';

/**
 * The typed view of the AI-managed collections `master`, `contacts` and
 * `schedule`. The AI itself writes them through the sandbox's raw driver; other
 * modules read and write them through these models.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: OwnerProfile.name, schema: OwnerProfileSchema },
      { name: Contact.name, schema: ContactSchema },
      { name: ScheduleEntry.name, schema: ScheduleEntrySchema },
    ]),
  ],
  exports: [MongooseModule],
})
export class PersonalDataModule implements OnModuleInit {
  constructor(
    @InjectModel(Contact.name) private readonly contacts: Model<Contact>,
    @InjectModel(ScheduleEntry.name)
    private readonly schedule: Model<ScheduleEntry>,
    private readonly startUp: StartUpWork,
  ) {}

  /** autoIndex is off (see DatabaseModule): the plain indexes (none unique) are built here, once per boot, while the server answers. */
  onModuleInit(): void {
    for (const model of [this.contacts, this.schedule] as Array<Model<unknown>>)
      this.startUp.run(`create the indexes of '${model.collection.name}'`, () =>
        model.createIndexes(),
      );
  }
}
