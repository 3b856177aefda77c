import { Injectable, type OnModuleInit } from '@nestjs/common';
import { SettingsService } from '../../settings/settings.service';
import { AiToolRegistry } from '../ai-tool-registry';

/** Lets settings check `disabledTools` against the registered tools (the meta tools cannot be switched off). */
@Injectable()
export class DisabledToolsCheck implements OnModuleInit {
  constructor(
    private readonly settings: SettingsService,
    private readonly registry: AiToolRegistry,
  ) {}

  onModuleInit(): void {
    this.settings.useToolNameCheck(
      (name) =>
        this.registry.tool(name) !== undefined &&
        !this.registry.isMetaTool(name),
    );
  }
}
