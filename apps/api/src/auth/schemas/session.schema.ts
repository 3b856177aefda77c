import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * A login session. `_id` is the SHA-256 of the cookie's token, so a copy of
 * the database does not hold usable sessions. Expired rows are purged by the
 * service (FerretDB 1.x has no TTL indexes).
 */
@Schema({ collection: 'auth_sessions', versionKey: false })
export class AuthSession {
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ required: true })
  createdAt!: Date;

  @Prop({ required: true })
  expiresAt!: Date;
}

export const AuthSessionSchema = SchemaFactory.createForClass(AuthSession);
