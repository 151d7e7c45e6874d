import type { z } from 'zod';

/**
 * The one error type of the platform. A worker throws it, the message path carries it to the edge
 * unchanged, and the edge writes it as `{type, message, details?}` with `status`.
 * Anything else that is thrown becomes a 500 whose message never reaches the client.
 */
export type ErrorDetail = Record<string, unknown>;

export interface ErrorBody {
  type: string;
  message: string;
  details?: ErrorDetail[];
}

export class AppError extends Error {
  override name = 'AppError';

  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly details?: ErrorDetail[],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  body(): ErrorBody {
    return this.details ? { type: this.type, message: this.message, details: this.details } : { type: this.type, message: this.message };
  }

  static badRequest(message: string, details?: ErrorDetail[]): AppError {
    return new AppError(400, 'bad_request', message, details);
  }

  /** A zod failure on client input: every issue is listed in `details`. */
  static validation(error: z.ZodError, where?: string): AppError {
    // `type` as well: the app SDKs decode every detail of an error by its type.
    const details = error.issues.map((issue) => ({
      type: 'invalid_field',
      code: issue.code,
      path: issue.path.map(String).join('.'),
      message: issue.message,
    }));
    const first = details[0];
    const summary = first ? `${first.path || where || 'input'}: ${first.message}` : 'invalid input';
    return new AppError(400, 'bad_request', `${where ? `invalid ${where}: ` : ''}${summary}`, details);
  }

  static forbidden(message = 'forbidden'): AppError {
    return new AppError(403, 'forbidden', message);
  }

  static notFound(message: string): AppError {
    return new AppError(404, 'not_found', message);
  }

  static conflict(message: string, type = 'conflict'): AppError {
    return new AppError(409, type, message);
  }

  static unavailable(message: string, options?: ErrorOptions): AppError {
    return new AppError(503, 'service_unavailable', message, undefined, options);
  }

  static internal(options?: ErrorOptions): AppError {
    return new AppError(500, 'internal_error', 'internal server error', undefined, options);
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
