import { Module } from '@nestjs/common';
import { FilesModule } from '../files/files.module';
import { SecretsModule } from '../secrets/secrets.module';
import { HostResolver, UrlFetcher } from './url-fetcher';
import { UrlFetchTool } from './url-fetch.tool';

/** `url_fetch`: guarded HTTP(S) for the model (address guard, header rules, auth profiles, downloads to the cache dir). */
@Module({
  imports: [FilesModule, SecretsModule],
  providers: [HostResolver, UrlFetcher, UrlFetchTool],
  exports: [UrlFetcher],
})
export class UrlFetchModule {}
