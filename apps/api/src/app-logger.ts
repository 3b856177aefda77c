import { ConsoleLogger } from '@nestjs/common';

/** Nest's own start-up chatter (one line per module and route): useful when debugging, noise otherwise. */
const WIRING_CONTEXTS = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
]);

export class AppLogger extends ConsoleLogger {
  override log(message: unknown, ...rest: unknown[]): void {
    const context = rest.at(-1);
    if (typeof context === 'string' && WIRING_CONTEXTS.has(context)) {
      this.debug(message, ...rest);
      return;
    }
    super.log(message, ...rest);
  }
}
