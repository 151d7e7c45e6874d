import type { Locator } from 'playwright-core';
import t from 'tap';
import { appears, assertAccessible, assertFitsWidth, chromiumPresent, launchBrowser, newPortalPage, portalUser, screenshot, signInThroughPortal, Viewports } from './support/browser.js';
import { startAppSdk } from './support/app-sdk.js';
import { p } from './support/checkout.js';
import { PasswordHashingEnv, startTestService } from './support/service.js';

/**
 * The owner's Clients screen ("Apps & Dienste") in Chromium: an app and a service client are made, each
 * secret shown once beside the form with what its holder needs (base URL and app id, or the token
 * address and client id), and each works as shown (the app SDK signs in, client credentials give a
 * token); a rotation keeps the old secret for a day or revokes it at once, only after asking; a
 * deletion asks first; how many app users an app has; only owners see the screen; English on a phone.
 */
if (chromiumPresent(t)) {
  const svc = await startTestService(t, { env: PasswordHashingEnv });
  const browser = await launchBrowser(t);
  const owner = await portalUser(svc, 'owner');
  const { context, page } = await newPortalPage(browser, svc);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await signInThroughPortal(page, owner);
  const token = await svc.token(['projectsWrite']);
  const listed = async () => (await svc.request('GET', `${p}/clients`, { token })).body.clients as any[];
  const named = async (name: string) => (await listed()).find((c) => c.name === name);
  const clientCredentials = (id: string, secret: string) =>
    svc.request('POST', '/oauth/token', {
      raw: 'grant_type=client_credentials',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` },
    });
  let appSecret = '';

  t.test('makes an app: its secret is shown once beside the form with the base URL and app id, and the app SDK signs in with them', async (t) => {
    await page.getByRole('link', { name: 'Apps & Dienste' }).click();
    await page.getByText('Noch keine App und kein Dienst.').waitFor();
    await page.getByRole('radio', { name: /^App:/ }).check();
    await page.getByLabel('Name').fill('Kunden-App');
    t.equal(await page.getByLabel('Gültigkeit eines Tokens (Minuten)').inputValue(), '60', 'an hour by default');
    await page.getByRole('button', { name: 'App anlegen' }).click();

    const shown = page.getByRole('region', { name: 'Zugangsdaten für Kunden-App' });
    appSecret = await shown.getByLabel('App-Geheimnis (TOTP-Schlüssel)').inputValue();
    t.match(appSecret, /^[A-Z2-7]{52}====$/, 'the TOTP key');
    const app = await named('Kunden-App');
    t.match(await shown.textContent(), new RegExp(`Wird nur jetzt angezeigt\\..*Basis-URL${new URL(svc.url).origin.replace(/\./g, '\\.')}App-ID${app.id}`), 'with the warning, the base URL and the app id');
    t.equal(await page.evaluate('document.activeElement.textContent'), 'Zugangsdaten für Kunden-App', 'the reader is taken to it');
    const form = await page.getByRole('button', { name: 'App anlegen' }).boundingBox();
    const secret = await shown.boundingBox();
    t.ok(form && secret && secret.x > form.x + form.width / 2 && secret.y < form.y + form.height, 'beside the form, not below it');
    await shown.getByRole('button', { name: 'Kopieren' }).click();
    await shown.getByRole('status').getByText('In die Zwischenablage kopiert.').waitFor();
    t.equal(await page.evaluate('navigator.clipboard.readText()'), appSecret, 'copied');
    await assertAccessible(t, page, 'a new app with its secret');
    await page.getByRole('heading', { name: 'Neue App oder neuer Dienst' }).scrollIntoViewIfNeeded();
    await screenshot(page, 'clients');

    const sdk = await startAppSdk(svc.url, app.id, appSecret);
    t.ok(await sdk.token(), 'the app SDK signs in with what the screen showed');
    t.notOk(JSON.stringify(await listed()).includes(appSecret), 'the list answers no secret');

    await page.getByRole('link', { name: 'Konten' }).click();
    await page.getByRole('heading', { name: 'Konto anlegen' }).waitFor();
    await page.getByRole('link', { name: 'Apps & Dienste' }).click();
    const entry = page.getByRole('article', { name: 'Kunden-App' });
    await entry.waitFor();
    t.equal(await page.getByText(appSecret).count(), 0, 'the secret is gone after leaving the screen');
    t.equal(await page.getByLabel('App-Geheimnis (TOTP-Schlüssel)').count(), 0);
    t.match(await entry.textContent(), /ArtAppID.*BerechtigungenRolle retailerApp: Shops lesen, Produkte lesen, Einkäufe lesen, Gutscheine lesen.*Gültigkeit eines Tokens60 MinutenApp-Nutzer1 App-NutzerAngelegt/, 'listed in words, with its one app user');
  });

  t.test('makes a service client with chosen permissions; a missing choice is said at the field; client credentials work with what is shown', async (t) => {
    await page.getByRole('radio', { name: /^Dienst:/ }).check();
    await page.getByLabel('Name').fill('Warenwirtschaft');
    await page.getByLabel('Gültigkeit eines Tokens (Minuten)').fill('15');
    await page.getByRole('button', { name: 'Dienst anlegen' }).click();
    await page.getByText('Wählen Sie mindestens eine Berechtigung.').waitFor();
    t.same((await listed()).map((c) => c.name), ['Kunden-App'], 'nothing was made');
    await page.getByRole('checkbox', { name: /Bestellungen und Belege lesen/ }).check();
    await page.getByRole('checkbox', { name: /^Shops lesen/ }).check();
    await page.getByRole('button', { name: 'Dienst anlegen' }).click();

    const shown = page.getByRole('region', { name: 'Zugangsdaten für Warenwirtschaft' });
    const secret = await shown.getByLabel('Client-Secret').inputValue();
    const service = await named('Warenwirtschaft');
    t.match(service, { kind: 'service', permissions: ['ordersRead', 'shopsRead'], tokenLifetimeSeconds: 900 }, 'made as chosen');
    t.match(await shown.textContent(), new RegExp(`Token-Adresse.*/oauth/tokenClient-ID${service.id}`), 'with the token address and the client id');
    const issued = await clientCredentials(service.id, secret);
    t.equal(issued.status, 200, issued.text);
    t.match(issued.body, { scope: 'ordersRead shopsRead', expires_in: 900 }, 'a token of its permissions and lifetime');
    t.match(await page.getByRole('region', { name: 'Apps und Dienste des Projekts' }).textContent(), /2 Einträge/, 'counted in words');
    await assertAccessible(t, page, 'a new service with its secret');
  });

  t.test('rotates a secret only after asking: the old one still works for a day; rotating with revocation ends it at once', async (t) => {
    const entry = page.getByRole('article', { name: 'Warenwirtschaft' });
    const service = await named('Warenwirtschaft');
    const first = (await clientCredentials(service.id, 'x')).status;
    t.equal(first, 401, 'a wrong secret is refused');

    await entry.getByRole('button', { name: 'Geheimnis erneuern (Warenwirtschaft)' }).click();
    const ask = page.getByRole('dialog', { name: 'Geheimnis von Warenwirtschaft erneuern?' });
    await ask.getByRole('button', { name: 'Nicht erneuern' }).click();
    t.notOk((await named('Warenwirtschaft')).rotatedAt, 'cancelling rotates nothing');
    await entry.getByRole('button', { name: 'Geheimnis erneuern (Warenwirtschaft)' }).click();
    await ask.getByRole('button', { name: 'Ja, neues Geheimnis' }).click();
    const shown = entry.getByRole('region', { name: 'Zugangsdaten für Warenwirtschaft' });
    const rotated = await shown.getByLabel('Client-Secret').inputValue();
    t.equal((await clientCredentials(service.id, rotated)).status, 200, 'the new secret works');
    await entry.getByText(/das vorherige gilt noch bis/).waitFor();
    t.match(await entry.textContent(), /Geheimnis erneuert.*das vorherige gilt noch bis \d{2}\.\d{2}\.\d{4}/, 'and how long the old one is accepted');

    await entry.getByRole('button', { name: 'Erneuern und das bisherige sperren (Warenwirtschaft)' }).click();
    await page.getByRole('dialog', { name: 'Geheimnis von Warenwirtschaft erneuern und das bisherige sofort sperren?' }).getByRole('button', { name: 'Ja, sofort sperren' }).click();
    await settledSecret(entry, rotated);
    t.equal((await clientCredentials(service.id, rotated)).status, 401, 'the secret before is refused at once');
    t.equal((await clientCredentials(service.id, await entry.getByLabel('Client-Secret').inputValue())).status, 200, 'the newest works');
    await entry.getByText(/das vorherige gilt/).waitFor({ state: 'detached' });
    t.notOk(/das vorherige gilt/.test((await entry.textContent()) ?? ''), 'no grace is shown');
    await assertAccessible(t, page, 'a rotated secret');
  });

  t.test('deletes a client only after asking; cancelling keeps it, and a deleted app signs nobody in', async (t) => {
    const app = await named('Kunden-App');
    const entry = page.getByRole('article', { name: 'Kunden-App' });
    await entry.getByRole('button', { name: 'Löschen (Kunden-App)' }).click();
    const ask = page.getByRole('dialog', { name: 'Kunden-App löschen?' });
    t.match(await ask.textContent(), /App-Nutzer einer App werden mit ihr gelöscht/, 'says what goes with it');
    await ask.getByRole('button', { name: 'Nicht löschen' }).click();
    t.ok(await named('Kunden-App'), 'kept');
    await entry.getByRole('button', { name: 'Löschen (Kunden-App)' }).click();
    await ask.getByRole('button', { name: 'Ja, löschen' }).click();
    await page.getByRole('region', { name: 'Apps und Dienste des Projekts' }).getByText('1 Eintrag', { exact: true }).waitFor();
    t.equal(await entry.count(), 0, 'gone from the screen');
    t.equal((await svc.request('GET', `/metadata/app/${app.id}/android/1.0`)).status, 404, 'and from the API');
  });

  t.test('only an owner sees the screen', async (t) => {
    const backoffice = await portalUser(svc, 'backoffice');
    const other = await newPortalPage(browser, svc);
    await signInThroughPortal(other.page, backoffice);
    t.notOk(await other.page.getByRole('link', { name: 'Apps & Dienste' }).isVisible(), 'no link for the back office');
    await other.context.close();
  });

  t.test('in English, on a phone', async (t) => {
    const phone = await newPortalPage(browser, svc, { locale: 'en-GB', viewport: Viewports.phone });
    await signInThroughPortal(phone.page, owner, 'en');
    await phone.page.getByRole('link', { name: 'Clients' }).click();
    const entry = phone.page.getByRole('article', { name: 'Warenwirtschaft' });
    t.ok(await appears(entry), 'the service is listed');
    t.match(await phone.page.getByRole('region', { name: "The project's clients" }).textContent(), /1 client/, 'counted in English');
    t.match(await entry.textContent(), /KindServiceId.*PermissionsRead orders and receipts, Read shopsToken lifetime15 minutes/, 'in English');
    await phone.page.getByRole('radio', { name: /^App:/ }).check();
    await phone.page.getByLabel('Name').fill('Phone app');
    await phone.page.getByRole('button', { name: 'Create app' }).click();
    t.ok(await appears(phone.page.getByRole('region', { name: 'Credentials of Phone app' }).getByLabel('App secret (TOTP key)')), 'its secret, below the form on a phone');
    await assertFitsWidth(t, phone.page, 'clients on a phone');
    await assertAccessible(t, phone.page, 'clients in English on a phone');
    await phone.context.close();
  });
}

/** Waits until the entry shows a secret other than `before` (a rotation's answer arrived). */
async function settledSecret(entry: Locator, before: string): Promise<void> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    const field = entry.getByRole('textbox');
    if ((await field.count()) && (await field.inputValue()) !== before) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
