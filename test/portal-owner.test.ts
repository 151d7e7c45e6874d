import t from 'tap';
import { assertAccessible, assertFitsWidth, chromiumPresent, launchBrowser, newPortalPage, portalUser, screenshot, signInThroughPortal, Viewports } from './support/browser.js';
import { p, seedCheckout } from './support/checkout.js';
import { PasswordHashingEnv, startTestService, TestProject } from './support/service.js';

/**
 * An owner's screens in Chromium: Today (sales per shop and the last 14 days from the orders API),
 * Shops, Settings (company data, validation at the field, the TSE and its choice, PoS credentials,
 * deleted only after asking)
 * and Accounts (a new account's one-time password signs in and must be replaced; a reset shows the
 * new one in the account's row; deleting asks first).
 */
if (chromiumPresent(t)) {
  const svc = await startTestService(t, { env: PasswordHashingEnv });
  const fx = await seedCheckout(svc);
  await fx.processIn('successful');
  await fx.processIn('successful', { items: [{ sku: 'BREAD', amount: 2 }] });
  const browser = await launchBrowser(t);
  const owner = await portalUser(svc, 'owner');
  const { page } = await newPortalPage(browser, svc);
  await signInThroughPortal(page, owner);

  t.test("Today shows today's sales per shop and the last 14 days", async (t) => {
    const today = page.getByRole('region', { name: 'Heute je Shop' });
    await today.getByRole('cell', { name: 'Shop 1' }).waitFor();
    t.match(await today.textContent(), /Shop 1.*2.*6,96\s€/, 'two orders, 1,98 € + 4,98 €');
    const chart = page.getByRole('region', { name: 'Umsatz der letzten 14 Tage' });
    t.equal(await chart.getByRole('row').count(), 15, 'a row per day under its header');
    await assertAccessible(t, page, 'today');
  });

  t.test('edits a shop, showing a validation error at its field', async (t) => {
    await page.getByRole('link', { name: 'Shops' }).click();
    await page.getByRole('button', { name: 'Shop Shop 2 bearbeiten' }).click();
    await page.getByLabel('Ort').fill('Hamburg');
    await page.getByLabel('Name').fill('x'.repeat(201));
    await page.getByRole('button', { name: 'Shop speichern' }).click();
    await page.locator('.field-error').first().waitFor();
    t.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true', 'the name field is marked');
    await assertAccessible(t, page, 'shop form with an error');
    await page.getByLabel('Name').fill('Filiale Hafen');
    await page.getByRole('button', { name: 'Shop speichern' }).click();
    await page.getByText('Gespeichert.').waitFor();
    const shop = await svc.request('GET', `${p}/shops/s2`, { token: await svc.token(['shopsRead']) });
    t.match(shop.body, { name: 'Filiale Hafen', city: 'Hamburg' });
    await assertAccessible(t, page, 'shops');
  });

  t.test('saves the company data; shows the fiscalization status; creates a PoS credential', async (t) => {
    await page.getByRole('link', { name: 'Einstellungen' }).click();
    await page.getByLabel('Firmenname').fill('Markt GmbH');
    await page.getByLabel('Währung').fill('euro');
    await page.getByRole('button', { name: 'Einstellungen speichern' }).click();
    await page.locator('.field-error').first().waitFor();
    t.equal(await page.getByLabel('Währung').getAttribute('aria-invalid'), 'true', 'the currency is marked');
    await page.getByLabel('Währung').fill('EUR');
    await page.getByRole('button', { name: 'Einstellungen speichern' }).click();
    await page.getByText('Gespeichert.').waitFor();
    const settings = await svc.request('GET', `${p}/settings`, { token: await svc.token(['projectsWrite']) });
    t.match(settings.body, { companyName: 'Markt GmbH', currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard'] });
    await page.getByRole('region', { name: 'Fiskalisierung' }).getByRole('definition').filter({ hasText: /^Lokaler Signierer/ }).waitFor();
    await page.getByLabel('Name des Zugangs').fill('Kasse 1');
    await page.getByRole('button', { name: 'Zugang anlegen' }).click();
    await page.getByText(/Benutzer pos-.*Passwort/).waitFor();
    await assertAccessible(t, page, 'settings');
  });

  t.test('chooses the TSE: fiskaly without its secret is marked at the field; a stored key is kept, never shown', async (t) => {
    const section = page.getByRole('region', { name: 'Fiskalisierung' });
    t.match(await section.textContent(), /Kassen \(je Shop\)2/, 'the tills to register: one per shop');
    await section.getByLabel('Signiert wird mit').selectOption('fiskaly');
    await section.getByLabel('TSS-ID').fill('b7c3c0b4-0000-4000-8000-000000000001');
    await section.getByLabel('API-Key').fill('key-PORTAL-1');
    await section.getByRole('button', { name: 'TSE-Auswahl speichern' }).click();
    await section.locator('.field-error').first().waitFor();
    t.equal(await section.getByLabel('API-Secret').getAttribute('aria-invalid'), 'true', 'the missing secret is marked');
    t.equal(await section.getByLabel('API-Key').getAttribute('aria-invalid'), null, 'the key is not');
    await assertAccessible(t, page, 'TSE choice with an error');
    const token = await svc.token(['projectsWrite']);
    t.notOk((await svc.request('GET', `${p}/settings`, { token })).body.fiscalization?.provider === 'fiskaly', 'nothing was saved');

    await section.getByLabel('API-Secret').fill('secret-PORTAL-2');
    await section.getByRole('button', { name: 'TSE-Auswahl speichern' }).click();
    await section.getByText('TSE-Auswahl gespeichert.').waitFor();
    const saved = await svc.request('GET', `${p}/settings`, { token });
    t.match(saved.body, { companyName: 'Markt GmbH', fiscalization: { provider: 'fiskaly', tssId: 'b7c3c0b4-0000-4000-8000-000000000001', apiKeySet: true, apiSecretSet: true, adminPinSet: false } });
    t.equal(await section.getByLabel('API-Key').inputValue(), '', 'a stored key is never shown');
    t.equal(await section.getByLabel('API-Key').getAttribute('placeholder'), 'gespeichert', 'it says one is stored');
    await section.getByRole('definition').filter({ hasText: /^fiskaly SIGN DE \(Cloud-TSE\)$/ }).waitFor();
    await section.getByText('Noch nicht signiert.').waitFor();
    t.notMatch(await section.textContent(), /Zertifiziert/, "the local signer's device is not shown as fiskaly's");
    await assertAccessible(t, page, 'TSE choice');
    await section.evaluate((element) => element.scrollIntoView({ block: 'start' }));
    await screenshot(page, 'settings-tse');

    // Back to the local signer, which the other screens' sales sign with.
    await section.getByLabel('Signiert wird mit').selectOption('local');
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`${p}/settings`) && r.request().method() === 'PUT'),
      section.getByRole('button', { name: 'TSE-Auswahl speichern' }).click(),
    ]);
    t.match((await svc.request('GET', `${p}/settings`, { token })).body.fiscalization, { provider: 'local', apiKeySet: true });
  });

  t.test('deletes a PoS credential only after asking', async (t) => {
    const remove = page.getByRole('button', { name: 'Zugang löschen (Kasse 1)' });
    t.match(await remove.innerText(), /^Zugang löschen/, 'a button with words');
    await remove.click();
    const dialog = page.getByRole('dialog', { name: 'Zugang Kasse 1 löschen?' });
    await dialog.getByRole('button', { name: 'Nicht löschen' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const token = await svc.token(['projectsWrite']);
    const names = async () => (await svc.request('GET', `${p}/pos/credentials`, { token })).body.credentials.map((c: any) => c.name);
    t.same(await names(), ['Kasse 1'], 'not deleted without the yes');
    await remove.click();
    await dialog.getByRole('button', { name: 'Ja, Zugang löschen' }).click();
    await page.getByText('Kein PoS-Zugang.').waitFor();
    t.same(await names(), [], 'deleted after the yes');
  });

  t.test('creates an account whose one-time password, shown below the form, signs in and must be replaced', async (t) => {
    await page.getByRole('link', { name: 'Konten' }).click();
    await page.getByLabel('E-Mail').fill('neu@example.com');
    await page.getByLabel('Rolle', { exact: true }).selectOption('supervisor');
    await page.getByRole('button', { name: 'Anlegen' }).click();
    const notice = await page.getByRole('region', { name: 'Konto anlegen' }).getByText(/Einmalpasswort für neu@example.com/).textContent();
    const oneTime = /: (\S+) \(/.exec(notice ?? '')?.[1] ?? '';
    t.ok(oneTime.length > 20, 'the one-time password is shown once, below the form that made it');
    t.equal(await page.getByRole('region', { name: 'Konten' }).getByText(/Einmalpasswort für/).count(), 0, 'not in the list');
    await assertAccessible(t, page, 'accounts');

    const other = await newPortalPage(browser, svc);
    await other.page.goto('/portal/');
    await other.page.getByLabel('Projekt').fill(TestProject);
    await other.page.getByLabel('E-Mail').fill('neu@example.com');
    await other.page.getByLabel('Passwort').fill(oneTime);
    await other.page.getByRole('button', { name: 'Anmelden' }).click();
    await other.page.getByRole('heading', { name: 'Neues Passwort wählen' }).waitFor();
    await assertAccessible(t, other.page, 'choose a password');
    await other.page.getByLabel('Aktuelles Passwort').fill(oneTime);
    await other.page.getByLabel('Neues Passwort', { exact: true }).fill('mein-neues-passwort');
    await other.page.getByLabel('Neues Passwort wiederholen').fill('mein-neues-passwort');
    await other.page.getByRole('button', { name: 'Passwort speichern' }).click();
    await other.page.getByRole('link', { name: 'Aufsicht' }).waitFor();
    t.equal(await other.page.getByRole('link', { name: 'Konten' }).count(), 0, 'a supervisor manages no accounts');
    await other.context.close();

    await page.getByRole('combobox', { name: 'Rolle von neu@example.com' }).selectOption('accounting');
    await page.waitForResponse((r) => r.url().includes('/portal/accounts') && r.request().method() === 'GET');
    const accounts = await svc.request('GET', `${p}/portal/accounts`, { token: await svc.token(['projectsWrite']) });
    t.match(accounts.body.accounts.find((a: any) => a.email === 'neu@example.com'), { role: 'accounting', passwordChangeRequired: false });
  });

  t.test("resets a password beside its account, and deletes an account only after asking", async (t) => {
    const row = page.getByRole('row', { name: /neu@example\.com/ });
    const reset = row.getByRole('button', { name: 'Passwort zurücksetzen (neu@example.com)' });
    t.match(await reset.innerText(), /^Passwort zurücksetzen/, 'a button with words');
    await reset.click();
    const notice = await row.getByRole('status').getByText(/Einmalpasswort für neu@example.com/).textContent();
    const oneTime = /: (\S+) \(/.exec(notice ?? '')?.[1] ?? '';
    t.ok(oneTime.length > 20, "the new one-time password is shown in the account's row");
    t.equal(await page.getByRole('region', { name: 'Konto anlegen' }).getByText(/Einmalpasswort/).count(), 0, 'not at the form');
    const signIn = await svc.request('POST', '/portal/api/session', { body: { project: TestProject, email: 'neu@example.com', password: oneTime }, headers: { origin: new URL(svc.url).origin } });
    t.equal(signIn.status, 200, 'it signs in');
    t.equal(await page.getByRole('row', { name: /owner@example\.com/ }).getByRole('button', { name: /Konto löschen/ }).count(), 0, 'no deleting oneself');
    await assertAccessible(t, page, 'accounts with a reset password');

    const remove = row.getByRole('button', { name: 'Konto löschen (neu@example.com)' });
    t.match(await remove.innerText(), /^Konto löschen/, 'a button with words');
    await remove.click();
    const dialog = page.getByRole('dialog', { name: 'Konto neu@example.com löschen?' });
    await dialog.getByRole('button', { name: 'Nicht löschen' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const token = await svc.token(['projectsWrite']);
    const emails = async () => (await svc.request('GET', `${p}/portal/accounts`, { token })).body.accounts.map((a: any) => a.email);
    t.ok((await emails()).includes('neu@example.com'), 'not deleted without the yes');
    await remove.click();
    await assertAccessible(t, page, 'the question before deleting');
    await dialog.getByRole('button', { name: 'Ja, Konto löschen' }).click();
    await row.waitFor({ state: 'detached' });
    t.notOk((await emails()).includes('neu@example.com'), 'deleted after the yes');
  });

  t.test('the owner screens fit a phone', async (t) => {
    const phone = await newPortalPage(browser, svc, { viewport: Viewports.phone });
    await signInThroughPortal(phone.page, owner);
    for (const [screen, ready] of [['today', 'Heute je Shop'], ['shops', 'Alle Shops'], ['settings', 'Unternehmen'], ['accounts', 'Konto anlegen']] as const) {
      await phone.page.goto(`/portal/${screen}`);
      await phone.page.getByRole('heading', { name: ready, exact: true }).waitFor();
      await assertFitsWidth(t, phone.page, `${screen} on a phone`);
    }
    await phone.page.getByRole('button', { name: 'Passwort zurücksetzen (owner@example.com)' }).waitFor();
    t.equal(await phone.page.getByRole('row', { name: /owner@example\.com/ }).count(), 1, 'an account stacked on a phone is still a row of the table for a screen reader');
    await assertAccessible(t, phone.page, 'accounts on a phone');
    await phone.context.close();
  });
}
