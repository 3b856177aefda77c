import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'metatron:isPublic';
/** Marks a route that answers without the owner's session (health, auth). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
