import { useEffect, useState } from 'preact/hooks';

/** Screens have paths under /portal/ (the edge answers the portal's page for each), kept in the history. */
export const Base = '/portal/';

export function currentScreen(): string {
  const rest = location.pathname.startsWith(Base) ? location.pathname.slice(Base.length) : '';
  return rest.split('/')[0] ?? '';
}

export function navigate(screen: string): void {
  history.pushState(null, '', `${Base}${screen}`);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useScreen(): string {
  const [screen, setScreen] = useState(currentScreen());
  useEffect(() => {
    const update = () => setScreen(currentScreen());
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return screen;
}

/** A link to a screen that stays in the page (a new tab or window still works as a link does). */
export function followLink(event: MouseEvent, screen: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(screen);
}
