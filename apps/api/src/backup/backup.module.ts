import { Module } from '@nestjs/common';
import { FilesModule } from '../files/files.module';
import { SettingsModule } from '../settings/settings.module';
import { BackupController } from './backup.controller';
import { BackupLimits } from './backup-limits';
import { BackupService } from './backup.service';

/** `GET /api/backup` (one archive of everything) and `POST /api/backup/restore`. */
@Module({
  imports: [FilesModule, SettingsModule],
  controllers: [BackupController],
  providers: [BackupService, BackupLimits],
})
export class BackupModule {}
