import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import canonicalize from 'canonicalize';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { idempotency } from '../../subjects/idempotency.js';
import { derivedUuid } from '../domain/derived-uuid.js';
import { AppError } from '../errors.js';
import type { ServiceClient } from '../messaging/client.js';

/**
 * `Idempotency-Key` on the POST routes that create (`config.idempotent`): the same key and request
 * (method, route, path, body) within 24 hours answer the first answer again (status, body,
 * Location, ETag) with `Idempotent-Replayed: true`; the same key with another request is 409
 * `idempotency_key_reused`. Keys are per project and live in Postgres (actors/idempotency): the
 * edge claims the key before the route runs, so of two requests with one key only one runs; the
 * other waits for its answer (up to REQUEST_TIMEOUT_MS), else 409 `idempotency_key_in_progress`.
 * A 5xx answer is not kept: the key is released and the client's retry runs the request again.
 *
 * The workers never see the key: they get its SHA-256, and the answer sealed (AES-256-GCM) with a
 * key derived from it, so the table tells nothing to a reader who does not hold the key.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** A create route that takes `Idempotency-Key`. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency: IdempotentRequest | null;
  }
}

interface IdempotentRequest {
  project: string;
  keyHash: string;
  sealKey: Buffer;
  fingerprint: string;
  /** Set once this request holds the key (it runs the route). */
  claim?: string;
}

export const IdempotencyKeyHeader = 'idempotency-key';

/** The route's header schema: the key is optional; other headers pass through as they came. */
export const IdempotencyKeyHeaders = z.looseObject({
  [IdempotencyKeyHeader]: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      'Makes the create safe to retry: the same key and body within 24 hours answer the first answer again (with `Idempotent-Replayed: true`); ' +
        'the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_key_in_progress`. ' +
        'A 5xx is not kept. Keys are per project: use a random one (a UUID v4) per operation.',
    ),
});

/** Headers of a route's answer that a replay repeats (the ones every answer gets are set anew). */
const KeptHeaders = ['content-type', 'location', 'etag', 'vary'] as const;

export interface IdempotencyOptions {
  /** How long a request waits for the answer of a running one with the same key (REQUEST_TIMEOUT_MS). */
  waitMs: number;
  /** How long a claim holds before another request with the same key may take it over. */
  leaseMs: number;
}

export function registerIdempotency(app: FastifyInstance, client: ServiceClient, options: IdempotencyOptions): void {
  app.decorateRequest('idempotency', null);

  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    if (route.schema?.headers) throw new Error(`${String(route.method)} ${route.url}: an idempotent route takes no other header schema`);
    route.schema = { ...route.schema, headers: IdempotencyKeyHeaders };
    route.preValidation = [...hooks(route.preValidation), fingerprint];
    route.preHandler = [...hooks(route.preHandler), (request, reply) => claim(request, reply, client, options)];
    route.onSend = [...hooks(route.onSend), (request, reply, payload) => record(request, reply, payload, client)];
  });
}

function hooks<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/**
 * The id a create with an Idempotency-Key gives what it creates (`kind`: what it is, such as
 * `checkout-process`), or undefined without a key: derived from the project and the key, so every
 * try of one create names the same thing. The edge's resend after a lost NATS node, and the
 * client's retry after a 503 whose work had finished meanwhile, find what the first try made
 * instead of making a second.
 */
export function idFromIdempotencyKey(request: FastifyRequest, kind: string): string | undefined {
  const key = request.headers[IdempotencyKeyHeader];
  if (!request.idempotency || typeof key !== 'string') return undefined;
  return derivedUuid(`${request.idempotency.project}/${kind}/${key}`);
}

/**
 * Before validation, while the body is the JSON as it came: the request's fingerprint, over its
 * canonical form (RFC 8785), so that a client that re-serializes the same body is the same request.
 */
async function fingerprint(request: FastifyRequest): Promise<void> {
  const key = request.headers[IdempotencyKeyHeader];
  if (typeof key !== 'string' || key.length === 0 || key.length > 255) return;
  const { project } = request.params as { project: string };
  const hash = createHash('sha256')
    .update(`${request.method} ${request.routeOptions.url}\n`)
    .update(canonicalize(request.params) ?? '')
    .update('\n')
    .update(canonicalize(request.body ?? null) ?? '');
  request.idempotency = {
    project,
    keyHash: createHash('sha256').update(key).digest('hex'),
    sealKey: Buffer.from(hkdfSync('sha256', key, project, 'checkout-platform idempotency answer', 32)),
    fingerprint: hash.digest('hex'),
  };
}

/** After validation: takes the key, or answers the first answer, or refuses. */
async function claim(request: FastifyRequest, reply: FastifyReply, client: ServiceClient, options: IdempotencyOptions): Promise<FastifyReply | undefined> {
  const pending = request.idempotency;
  if (!pending) return undefined;
  const deadline = Date.now() + options.waitMs;
  // Chosen here, so that a claim sent again after a lost NATS node finds itself holding the key.
  const claimId = randomUUID();
  for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
    const result = await client.call(idempotency.claim, {
      project: pending.project,
      keyHash: pending.keyHash,
      fingerprint: pending.fingerprint,
      leaseMs: options.leaseMs,
      claim: claimId,
    });
    switch (result.outcome) {
      case 'claimed':
        pending.claim = result.claim;
        return undefined;
      case 'replay': {
        request.idempotency = null;
        const answer = open(pending.sealKey, result.answer);
        for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
        return reply.code(result.status).header('idempotent-replayed', 'true').send(answer.body);
      }
      case 'reused':
        throw new AppError(409, 'idempotency_key_reused', 'this Idempotency-Key was used with another request within the last 24 hours; use a new key');
      case 'inProgress':
        if (Date.now() + pause > deadline) {
          reply.header('retry-after', '1');
          throw new AppError(409, 'idempotency_key_in_progress', 'a request with this Idempotency-Key is still running; try again in a moment');
        }
        await sleep(pause);
    }
  }
}

/** The answer of the request that held the key: kept unless it is a 5xx, which releases the key. */
async function record(request: FastifyRequest, reply: FastifyReply, payload: unknown, client: ServiceClient): Promise<unknown> {
  const pending = request.idempotency;
  if (!pending?.claim) return payload;
  request.idempotency = null;
  const key = { project: pending.project, keyHash: pending.keyHash, claim: pending.claim };
  const status = reply.statusCode;
  const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
  try {
    if (status >= 500 || body === undefined) {
      await client.call(idempotency.release, key);
    } else {
      const headers: Record<string, string> = {};
      for (const name of KeptHeaders) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      await client.call(idempotency.complete, { ...key, status, answer: seal(pending.sealKey, { headers, body }) });
    }
  } catch (err) {
    // The answer stands; the key stays claimed until its lease ends, then a retry runs again.
    request.log.warn({ err, status }, 'the answer of an idempotent request could not be recorded');
  }
  return payload;
}

const KeptAnswer = z.object({ headers: z.record(z.string(), z.string()), body: z.string() });
type KeptAnswer = z.infer<typeof KeptAnswer>;

const IvBytes = 12;
const TagBytes = 16;

function seal(key: Buffer, answer: KeptAnswer): string {
  const iv = randomBytes(IvBytes);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TagBytes });
  const sealed = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

function open(key: Buffer, base64: string): KeptAnswer {
  const bytes = Buffer.from(base64, 'base64');
  try {
    // GCM accepts tags as short as 4 bytes unless told their length: an answer cut short must not open.
    if (bytes.length < IvBytes + TagBytes) throw new Error('the kept answer is shorter than its nonce and tag');
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IvBytes), { authTagLength: TagBytes });
    decipher.setAuthTag(bytes.subarray(IvBytes, IvBytes + TagBytes));
    const text = Buffer.concat([decipher.update(bytes.subarray(IvBytes + TagBytes)), decipher.final()]).toString('utf8');
    return KeptAnswer.parse(JSON.parse(text));
  } catch (err) {
    throw AppError.internal({ cause: new Error('a kept idempotent answer cannot be opened', { cause: err }) });
  }
}
