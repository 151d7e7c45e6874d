/**
 * The API as the portal calls it: same origin, the session cookie (the browser sends it), JSON in
 * and out. Errors of either shape the API answers (`{type, message}` or `{error: {type, message}}`)
 * become one ApiError.
 */
export interface ErrorDetail {
  path?: string;
  /** What kind of problem, where the API names one (`too_many`, zod's issue codes). */
  code?: string;
  message?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

export interface Answer<T> {
  body: T;
  headers: Headers;
  status: number;
}

export interface CallOptions {
  body?: unknown;
  /** A body sent as it is (a file being imported), with its content type. */
  raw?: { data: BodyInit; contentType: string };
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export async function call<T = unknown>(method: string, url: string, options: CallOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: BodyInit | undefined;
  if (options.raw) {
    body = options.raw.data;
    headers['content-type'] = options.raw.contentType;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(url, { method, headers, body, credentials: 'same-origin', signal: options.signal });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  // ndjson stays text: its caller reads it line by line.
  const parsed: unknown = text && type.includes('json') && !type.includes('ndjson') ? JSON.parse(text) : text;
  if (!response.ok) throw toError(response.status, parsed);
  return { body: parsed as T, headers: response.headers, status: response.status };
}

function toError(status: number, body: unknown): ApiError {
  const shape = (typeof body === 'object' && body !== null ? body : {}) as { type?: string; message?: string; details?: ErrorDetail[]; error?: { type?: string; message?: string; details?: ErrorDetail[] } };
  const type = shape.type ?? shape.error?.type ?? `http_${status}`;
  const message = shape.message ?? shape.error?.message ?? `HTTP ${status}`;
  const details = shape.details ?? shape.error?.details;
  return new ApiError(status, type, message, Array.isArray(details) ? details : []);
}

/** The calls of one project's API: paths are relative to `/{project}`. */
/** Where a paged list's answer stands (the orders, the closings, a webhook's deliveries). */
export interface Pagination {
  page: number;
  perPage: number;
  totalPages: number;
  totalItems: number;
}

export interface ProjectApi {
  project: string;
  get<T>(path: string, options?: CallOptions): Promise<T>;
  send<T>(method: string, path: string, body?: unknown, options?: CallOptions): Promise<T>;
  call<T>(method: string, path: string, options?: CallOptions): Promise<Answer<T>>;
  url(path: string): string;
}

export function projectApi(project: string): ProjectApi {
  const url = (path: string) => `/${encodeURIComponent(project)}${path}`;
  return {
    project,
    url,
    get: async (path, options) => (await call<never>('GET', url(path), options)).body,
    send: async (method, path, body, options) => (await call<never>(method, url(path), { ...options, body })).body,
    call: (method, path, options) => call(method, url(path), options),
  };
}
