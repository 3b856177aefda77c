/** Minimum length of the owner's password (setup and change). */
export const OWNER_PASSWORD_MIN_LENGTH = 8;
/** Upper bound that keeps hashing cost bounded for hostile input. */
export const OWNER_PASSWORD_MAX_LENGTH = 1024;

/** `GET /api/auth/status` */
export interface AuthStatus {
  ownerExists: boolean;
  authenticated: boolean;
}

/** Body of `POST /api/auth/setup` and `POST /api/auth/login`. */
export interface PasswordRequest {
  password: string;
}
