import { z } from 'zod';
import { jsonMayBeUnstorable } from './formats/json.js';

/**
 * An endpoint of the message path: a request/reply subject `svc.<domain>.<verb>` with the zod
 * schemas of its request and its reply. The edge sends with it, a worker serves it; both import the
 * same object, so the two sides cannot disagree on a shape. Workers of one domain share the queue
 * group named after the domain, so adding a worker process adds capacity and nothing else.
 */
export type Subject = `svc.${string}.${string}`;

export interface Endpoint<Request extends z.ZodType = z.ZodType, Reply extends z.ZodType = z.ZodType> {
  readonly subject: Subject;
  readonly queue: string;
  readonly request: Request;
  readonly reply: Reply;
  /** How requests travel; JSON unless the endpoint says otherwise. Replies are always JSON. */
  readonly codec: Codec;
  /**
   * Whether handling this request twice has the effect and the answer of handling it once (a read;
   * a PUT of a client-chosen id; asking for the state an entity is in). Such a request is sent
   * again by the edge when a NATS node was lost while it was under way, instead of answering 503.
   */
  readonly repeatable: (request: unknown) => boolean;
}

/** `repeatable` of an endpoint: always, or decided by the request (a create that carries its id). */
export type Repeatable<Request extends z.ZodType> = boolean | ((request: z.input<Request>) => boolean);

/** The bytes of a request. `decode` answers what the request schema then validates. */
export interface Codec {
  encode(request: unknown): string | Uint8Array;
  decode(data: Uint8Array): unknown;
  /** The media type of the bytes (the AsyncAPI document states it); JSON when absent. */
  readonly contentType?: string;
  /** How the bytes are framed, for a codec that is not plain JSON. */
  readonly description?: string;
  /**
   * False when the bytes cannot decode to text Postgres cannot store or to nesting deeper than
   * MaxJsonDepth: the worker then skips its walk of the request (findUnstorableText). Absent: the
   * request is always walked.
   */
  mayBeUnstorable?(data: Uint8Array): boolean;
}

const utf8 = new TextDecoder();

export const JsonCodec: Codec = {
  contentType: 'application/json',
  encode: (request) => JSON.stringify(request),
  decode: (data) => JSON.parse(utf8.decode(data)) as unknown,
  mayBeUnstorable: jsonMayBeUnstorable,
};

export type RequestOf<E extends Endpoint> = z.input<E['request']>;
export type ParsedRequestOf<E extends Endpoint> = z.output<E['request']>;
export type ReplyOf<E extends Endpoint> = z.output<E['reply']>;

export function endpoint<const S extends Subject, Request extends z.ZodType, Reply extends z.ZodType>(
  subject: S,
  request: Request,
  reply: Reply,
  options: { codec?: Codec; repeatable?: Repeatable<Request> } = {},
): Endpoint<Request, Reply> & { readonly subject: S } {
  const queue = subject.split('.')[1] as string;
  const decide = options.repeatable ?? false;
  const repeatable = typeof decide === 'function' ? (r: unknown) => decide(r as z.input<Request>) : () => decide;
  return { subject, queue, request, reply, codec: options.codec ?? JsonCodec, repeatable };
}

/**
 * Error replies: the body is the error object and these headers mark it (the convention of the
 * NATS service framework), so a successful reply is the bare result with nothing to unwrap.
 */
export const ErrorHeaders = {
  code: 'Nats-Service-Error-Code',
  message: 'Nats-Service-Error',
} as const;

export const ErrorReply = z.object({
  type: z.string(),
  message: z.string(),
  details: z.array(z.record(z.string(), z.unknown())).optional(),
});
export type ErrorReply = z.infer<typeof ErrorReply>;
