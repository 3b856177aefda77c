/**
 * Everything the server needs beyond starting its database: the app's modules, Nest, Express and
 * the packages they pull in (~0.45 s of start-up CPU). main.ts imports this only after it has
 * spawned the embedded database, so that the two start side by side instead of one after the
 * other (FerretDB takes ~0.1–0.2 s to be ready).
 */
export { Logger } from '@nestjs/common';
export { NestFactory } from '@nestjs/core';
export { AppLogger } from '../app-logger';
export { AppModule } from '../app/app.module';
export { configureApp, HTTP_APP_OPTIONS } from '../http/configure-app';
