import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AttachmentsModule } from '../attachments/attachments.module';
import { BudgetModule } from '../budget/budget.module';
import { UsageModule } from '../usage/usage.module';
import { EditImageTool, GenerateImageTool, ImageService } from './image-tools';
import { MediaController } from './media.controller';
import { MediaMode } from './media-mode';
import { MediaStore } from './media.store';
import { MediaRecord, MediaSchema } from './schemas/media.schema';

/**
 * Generated and edited images: the `media` collection, the files under
 * `<DATA_DIR>/media/`, `GET /api/media/:id` and the generate_image / edit_image tools.
 * A deleted chat's images go with it (MediaStore listens to `chats.changed`).
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: MediaRecord.name, schema: MediaSchema },
    ]),
    AttachmentsModule,
    BudgetModule,
    UsageModule,
  ],
  controllers: [MediaController],
  providers: [
    MediaStore,
    ImageService,
    GenerateImageTool,
    EditImageTool,
    MediaMode,
  ],
  exports: [MediaStore],
})
export class MediaModule {}
