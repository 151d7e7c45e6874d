/** A small HTTP client for tests: real requests to the service's port, JSON in and out. */
export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** A raw body sent as is (ndjson, broken JSON, ...). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface HttpClient {
  url: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResponse<T>>;
}

export function createHttpClient(url: string): HttpClient {
  return {
    url,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let payload: string | undefined = options.raw;
      if (options.body !== undefined) {
        payload = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${url}${path}`, { method, headers, body: payload });
      const text = await response.text();
      const body = decode(response.headers.get('content-type') ?? '', text) as never;
      return { status: response.status, headers: response.headers, body, text };
    },
  };
}

/** JSON is parsed; ndjson becomes the array of its parsed lines; anything else stays text. */
function decode(contentType: string, text: string): unknown {
  if (!text) return text;
  if (contentType.includes('ndjson')) return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown);
  if (contentType.includes('json')) return JSON.parse(text) as unknown;
  return text;
}
