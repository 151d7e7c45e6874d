import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { AppError, isAppError } from '../errors.js';

/**
 * One error shape on the wire: `{type, message, details?}`; `{error: {...}}` on the routes of
 * families the spec wraps (config.errorEnvelope `wrapped`); and both at once on the checkout
 * routes (`both`): the spec's fields at the top, repeated under `error`, where the app SDKs read
 * them. The OAuth token endpoint answers RFC 6749's `{error, error_description}` (`oauth`). 5xx
 * bodies never carry internals.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    errorEnvelope?: 'plain' | 'wrapped' | 'both' | 'oauth';
  }
}

/** RFC 6749 §5.2's error codes: an AppError of one of these types keeps it. */
const OAuthErrors: ReadonlySet<string> = new Set(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope']);

/**
 * An error as RFC 6749 §5.2 writes it. What the RFC names no code for: a refused request body is
 * `invalid_request`; too many failed sign-ins `slow_down` (RFC 8628's code for a client that asks
 * too often) with Retry-After; a 503 `temporarily_unavailable` and a 500 `server_error` (RFC
 * 6749's codes of the authorization endpoint, which token clients know too).
 */
function oauthBody(error: AppError): { error: string; error_description: string } {
  const code = OAuthErrors.has(error.type)
    ? error.type
    : error.status === 429
      ? 'slow_down'
      : error.status === 503
        ? 'temporarily_unavailable'
        : error.status >= 500
          ? 'server_error'
          : 'invalid_request';
  return { error: code, error_description: error.message };
}

const FastifyCodes: Record<string, { status: number; type: string; message?: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, type: 'unsupported_media_type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, type: 'bad_request' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, type: 'payload_too_large', message: 'the request body is too large' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, type: 'bad_request', message: 'the JSON body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, type: 'bad_request', message: 'the body is not valid JSON' },
};

/**
 * Seconds a client should wait before it tries a 503 again: a worker that did not answer, a broker or
 * database that is being reconnected or restarted (the embedded ones come back within seconds).
 */
export const RetryAfterSeconds = 2;

export function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const fastifyError = err as Partial<FastifyError>;
  const known = fastifyError.code ? FastifyCodes[fastifyError.code] : undefined;
  if (known) return new AppError(known.status, known.type, known.message ?? fastifyError.message ?? known.type);
  // Fastify's own parser reports malformed JSON as a SyntaxError with status 400.
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) return new AppError(status, 'bad_request', fastifyError.message ?? 'bad request');
  return AppError.internal({ cause: err });
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  // 503 means "not now" (an outage, a saturated pool), never "wrong": the client is told when to come
  // back, and the log says it once per request without calling it a failure of the service's own.
  if (error.status === 503) {
    request.log.warn({ err: error.cause ?? error, url: request.url }, 'request unavailable');
    reply.header('retry-after', String(RetryAfterSeconds));
  } else if (error.status >= 500) request.log.error({ err: error.cause ?? error, url: request.url }, 'request failed');
  // A worker's 429 says in its details when to come back (it crossed NATS as {status, type, message, details}).
  if (error.status === 429 && !reply.hasHeader('retry-after')) {
    const wait = error.details?.find((d) => typeof d.retryAfterSeconds === 'number')?.retryAfterSeconds;
    if (typeof wait === 'number') reply.header('retry-after', String(wait));
  }
  const envelope = request.routeOptions.config?.errorEnvelope;
  if (envelope === 'oauth') {
    // RFC 6749 §5.2: a failed client authentication answers 401 with the scheme it may use.
    if (error.status === 401) reply.header('www-authenticate', 'Basic realm="checkout-platform", charset="UTF-8"');
    return reply.code(error.status).header('cache-control', 'no-store').send(oauthBody(error));
  }
  const body = error.body();
  return reply.code(error.status).send(envelope === 'wrapped' ? { error: body } : envelope === 'both' ? { ...body, error: body } : body);
}

export function registerErrorHandling(app: FastifyInstance): void {
  // A second router with every route's method and path tells a wrong method (405) from no route (404).
  const routes = FindMyWay({ ignoreTrailingSlash: true });
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      methods.add(method);
      routes.on(method as FindMyWay.HTTPMethod, route.url, () => {});
    }
  });

  app.setErrorHandler((err, request, reply) => sendError(request, reply, toAppError(err)));

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = [...methods].filter((m) => m !== request.method && routes.find(m as FindMyWay.HTTPMethod, path));
    if (allowed.length) {
      reply.header('allow', allowed.join(', '));
      return sendError(request, reply, new AppError(405, 'method_not_allowed', `${request.method} is not supported on ${path}`));
    }
    return sendError(request, reply, AppError.notFound(`no route ${request.method} ${path}`));
  });
}
