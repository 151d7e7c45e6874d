import { useEffect, useRef } from 'preact/hooks';

/**
 * Follows a server-sent event stream of the API (EventSource sends the session cookie; it
 * reconnects by itself). `onReady` runs each time the stream is followed (first and after every
 * reconnect): load the current state then, and nothing between is missed.
 */
export function useEventStream(url: string | null, handlers: { onReady(): void; onEvent(type: string, data: unknown): void }, types: readonly string[]): void {
  const current = useRef(handlers);
  current.current = handlers;
  useEffect(() => {
    if (!url) return;
    const source = new EventSource(url, { withCredentials: true });
    source.addEventListener('ready', () => current.current.onReady());
    for (const type of types) source.addEventListener(type, (e) => current.current.onEvent(type, JSON.parse((e as MessageEvent<string>).data) as unknown));
    return () => source.close();
  }, [url]);
}
