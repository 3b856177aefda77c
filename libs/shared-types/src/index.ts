export * from './lib/auth';
export * from './lib/system';
export * from './lib/events';
export * from './lib/api-error';
export * from './lib/settings';
export * from './lib/system-instruction';
export * from './lib/chats';
export * from './lib/data';
