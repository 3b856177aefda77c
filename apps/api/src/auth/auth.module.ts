import { DynamicModule, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { LoginRateLimiter } from './login-rate-limiter';
import { PasswordHasher } from './password-hasher';
import { OwnerCredential, OwnerCredentialSchema } from './schemas/owner.schema';
import { AuthSession, AuthSessionSchema } from './schemas/session.schema';
import { SessionGuard } from './session.guard';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: OwnerCredential.name, schema: OwnerCredentialSchema },
      { name: AuthSession.name, schema: AuthSessionSchema },
    ]),
  ],
  controllers: [AuthController],
  providers: [AuthService, LoginRateLimiter, SessionGuard],
  exports: [AuthService, SessionGuard],
})
export class AuthModule {
  /** `passwordHasher`: tests and benches hand in a cheaper one. */
  static forRoot(passwordHasher = new PasswordHasher()): DynamicModule {
    return {
      module: AuthModule,
      providers: [{ provide: PasswordHasher, useValue: passwordHasher }],
    };
  }
}
