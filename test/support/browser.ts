import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { projectRoot } from '../../src/infra/project-root.js';
import { p } from './checkout.js';
import { TestProject, type TestService } from './service.js';

/**
 * The portal's browser tests: Debian's Chromium driven by playwright-core (nothing is downloaded),
 * one browser per test file. Without Chromium the file is skipped with a message saying how to get it.
 */
export const ChromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const Viewports = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/** False (and the file planned as skipped, saying why) when there is no Chromium. */
export function chromiumPresent(t: Test): boolean {
  if (existsSync(ChromiumPath)) return true;
  t.plan(0, `portal browser tests skipped: no Chromium at ${ChromiumPath} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  return false;
}

export async function launchBrowser(t: Test): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: ChromiumPath,
    headless: true,
    // Root (CI) cannot use Chromium's sandbox; /dev/shm is small in containers.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  t.teardown(() => browser.close());
  return browser;
}

/**
 * The time zone the test's browsers live in: one where it is about noon when the file starts
 * (Etc/GMT-N is N hours east of UTC), so that the portal's "today", which it takes from the
 * browser's clock and zone, is the same day for the whole file, whenever CI runs it. Without DST.
 */
export const NoonZone = ((): string => {
  const east = 12 - new Date().getUTCHours();
  return east === 0 ? 'Etc/UTC' : `Etc/GMT${east > 0 ? '-' : '+'}${Math.abs(east)}`;
})();

/** The date of `at` in the browsers' zone (NoonZone), as the portal writes it in German or US English. */
export function portalDate(at: Date, form: 'de' | 'en-US' = 'de'): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: NoonZone, day: '2-digit', month: '2-digit', year: 'numeric' }).formatToParts(at);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((x) => x.type === type)!.value;
  return form === 'de' ? `${part('day')}.${part('month')}.${part('year')}` : `${part('month')}/${part('day')}/${part('year')}`;
}

/** A browser profile of its own (its own cookies), German unless told otherwise, in NoonZone. */
export async function newPortalPage(browser: Browser, svc: TestService, options: { locale?: string; viewport?: { width: number; height: number } } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    baseURL: svc.url,
    locale: options.locale ?? 'de-DE',
    timezoneId: NoonZone,
    viewport: options.viewport ?? Viewports.desktop,
    acceptDownloads: true,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return { context, page };
}

export interface PortalUser {
  email: string;
  password: string;
}

/** An account of the role with its own password chosen (over HTTP, as its first sign-in would). */
export async function portalUser(svc: TestService, role: 'owner' | 'backoffice' | 'supervisor' | 'accounting', email = `${role}@example.com`): Promise<PortalUser> {
  const admin = await svc.token(['projectsWrite']);
  const created = await svc.request('POST', `${p}/portal/accounts`, { token: admin, body: { email, role } });
  if (created.status !== 201) throw new Error(`portal account: ${created.status} ${created.text}`);
  const origin = new URL(svc.url).origin;
  const signIn = await svc.request('POST', '/portal/api/session', { body: { project: TestProject, email, password: created.body.password } });
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
  const password = `${role}-password-1`;
  const changed = await svc.request('PUT', '/portal/api/session/password', { headers: { cookie, origin }, body: { currentPassword: created.body.password, newPassword: password } });
  if (changed.status !== 200) throw new Error(`portal password: ${changed.status} ${changed.text}`);
  return { email, password };
}

const SignInWords = {
  de: { project: 'Projekt', email: 'E-Mail', password: 'Passwort', signIn: 'Anmelden', nav: 'Hauptnavigation' },
  en: { project: 'Project', email: 'Email', password: 'Password', signIn: 'Sign in', nav: 'Main navigation' },
} as const;

/** Signs in through the portal's form (in the words of the page's language, German unless told), and waits for the navigation. */
export async function signInThroughPortal(page: Page, user: PortalUser, language: keyof typeof SignInWords = 'de'): Promise<void> {
  const w = SignInWords[language];
  await page.goto('/portal/');
  await page.getByLabel(w.project).fill(TestProject);
  await page.getByLabel(w.email).fill(user.email);
  await page.getByLabel(w.password).fill(user.password);
  await page.getByRole('button', { name: w.signIn }).click();
  await page.getByRole('navigation', { name: w.nav }).waitFor();
}

let axeSource: Promise<string> | undefined;

/**
 * axe-core in the page (evaluated over the DevTools protocol, so the portal's Content-Security-Policy
 * stays as it is): no critical or serious violation on what the page shows now.
 */
export async function assertAccessible(t: Test, page: Page, what: string): Promise<void> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(await axeSource);
  // A string, evaluated in the page: this program has no DOM types.
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target)),
  })))`)) as Array<{ id: string; impact: string; help: string; targets: string[] }>;
  t.same(violations.filter((v) => v.impact === 'critical' || v.impact === 'serious'), [], `${what}: no critical or serious axe-core violation`);
}

/** Nothing wider than the viewport (no sideways scrolling of the page itself). */
export async function assertFitsWidth(t: Test, page: Page, what: string): Promise<void> {
  const { scroll, client } = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })')) as { scroll: number; client: number };
  t.ok(scroll <= client, `${what}: fits ${client} px wide (page is ${scroll} px)`);
}

/**
 * PNG screenshots for the README and docs/portal.md (docs/portal/), written when
 * PORTAL_SCREENSHOTS=1: the tests make them from real screens, so they show what the portal looks
 * like now.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.PORTAL_SCREENSHOTS !== '1') return;
  const dir = path.join(projectRoot(), 'docs/portal');
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: false });
}

/**
 * True once the element is visible (waiting up to the page's timeout), false when it never appears:
 * for assertions right after a navigation or a reload, where `isVisible()` would ask too early.
 */
export async function appears(locator: Locator): Promise<boolean> {
  return locator.waitFor({ state: 'visible' }).then(() => true, () => false);
}

/** What `read` answers once `done` holds for it (polled every 50 ms up to 15 s), for values the page settles on. */
export async function settled<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
