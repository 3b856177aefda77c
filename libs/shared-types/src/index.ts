export * from './lib/auth';
export * from './lib/system';
export * from './lib/events';
export * from './lib/api-error';
