import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import {
  OWNER_PASSWORD_MAX_LENGTH,
  OWNER_PASSWORD_MIN_LENGTH,
  type AuthStatus,
  type PasswordRequest,
} from '@metatronos/shared-types';

export class SetupOwnerDto implements PasswordRequest {
  @ApiProperty({
    minLength: OWNER_PASSWORD_MIN_LENGTH,
    maxLength: OWNER_PASSWORD_MAX_LENGTH,
  })
  @IsString()
  @MinLength(OWNER_PASSWORD_MIN_LENGTH, {
    message: `password must be at least ${OWNER_PASSWORD_MIN_LENGTH} characters`,
  })
  @MaxLength(OWNER_PASSWORD_MAX_LENGTH)
  password!: string;
}

export class LoginDto implements PasswordRequest {
  @ApiProperty()
  @IsString()
  @MinLength(1, { message: 'password must not be empty' })
  @MaxLength(OWNER_PASSWORD_MAX_LENGTH)
  password!: string;
}

export class AuthStatusDto implements AuthStatus {
  @ApiProperty({ description: 'Whether the owner password has been set' })
  ownerExists!: boolean;
  @ApiProperty({ description: 'Whether this request carries a valid session' })
  authenticated!: boolean;
}
