import { Module } from '@nestjs/common';
import { RelaxMode, RelaxPromptSection } from './relax-mode';

/** Seed 003's relax mode (no tools of its own). */
@Module({ providers: [RelaxMode, RelaxPromptSection] })
export class RelaxModule {}
