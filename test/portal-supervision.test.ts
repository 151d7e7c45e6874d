import t from 'tap';
import { appears, assertAccessible, assertFitsWidth, chromiumPresent, launchBrowser, newPortalPage, portalUser, screenshot, signInThroughPortal, Viewports } from './support/browser.js';
import { finishPayment, seedCheckout } from './support/checkout.js';
import { PasswordHashingEnv, startTestService, TestProject } from './support/service.js';

/**
 * The portal in Chromium: signing in and out, the lockout as a person sees it, the language switch,
 * and Supervision: an age check an app creates through the API appears live with whose it is and
 * how long it has waited, the supervisor confirms it, and the app's process can then be paid;
 * refusing a purchase asks first; the shop picker ignores a change to the shop already chosen.
 */
if (chromiumPresent(t)) {
  const svc = await startTestService(t, { env: PasswordHashingEnv });
  const fx = await seedCheckout(svc);
  const browser = await launchBrowser(t);
  const supervisor = await portalUser(svc, 'supervisor');

  t.test('signs in and out, says so when the password is wrong, and switches the language', async (t) => {
    const { page, context } = await newPortalPage(browser, svc);
    await page.goto('/portal/');
    await assertAccessible(t, page, 'sign-in');
    await page.getByLabel('Projekt').fill(TestProject);
    await page.getByLabel('E-Mail').fill(supervisor.email);
    await page.getByLabel('Passwort').fill('not the password');
    await page.getByRole('button', { name: 'Anmelden' }).click();
    t.equal(await page.getByRole('alert').textContent(), 'E-Mail oder Passwort ist falsch.');

    await signInThroughPortal(page, supervisor);
    t.equal(await page.getByRole('link', { name: 'Aufsicht' }).getAttribute('aria-current'), 'page', 'a supervisor starts at Supervision');
    t.match(await page.getByRole('banner').textContent(), /Angemeldet als supervisor@example.com \(Aufsicht\)/, 'the role in words');
    const cookie = (await context.cookies()).find((c) => c.name === 'portal_session');
    t.match(cookie, { httpOnly: true, sameSite: 'Strict' }, 'the session cookie is HttpOnly and SameSite=Strict');

    await page.getByLabel('Sprache').selectOption('en');
    await page.getByRole('navigation', { name: 'Main navigation' }).waitFor();
    t.ok(await appears(page.getByRole('link', { name: 'Supervision' })), 'English words after the switch');
    t.equal(await page.evaluate('document.documentElement.lang'), 'en');
    await page.reload();
    t.ok(await appears(page.getByRole('button', { name: 'Sign out' })), 'the choice is remembered');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    t.notOk((await context.cookies()).some((c) => c.name === 'portal_session' && c.value), 'the cookie is gone');
    t.equal((await svc.request('GET', '/portal/api/session', { headers: { cookie: `portal_session=${cookie!.value}` } })).status, 403, 'the session ended');
    await context.close();
  });

  t.test('five failed sign-ins lock the account; the portal says for how long', async (t) => {
    const victim = await portalUser(svc, 'accounting', 'locked@example.com');
    const { page, context } = await newPortalPage(browser, svc);
    await page.goto('/portal/');
    await page.getByLabel('Projekt').fill(TestProject);
    await page.getByLabel('E-Mail').fill(victim.email);
    for (let i = 0; i < 5; i++) {
      await page.getByLabel('Passwort').fill(`wrong-${i}`);
      await page.getByRole('button', { name: 'Anmelden' }).click();
      await page.getByRole('alert').waitFor();
      if (i < 4) await page.getByRole('alert').filter({ hasText: 'falsch' }).waitFor();
    }
    await page.getByLabel('Passwort').fill(victim.password);
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await page.getByRole('alert').filter({ hasText: '15 Minuten' }).waitFor();
    t.match(await page.getByRole('alert').textContent(), /gesperrt/, 'the right password is refused while locked');
    t.notOk(await page.getByRole('navigation').count(), 'not signed in');
    await context.close();
  });

  t.test('a supervisor confirms the age of a live age check that an app created, and the app then pays', async (t) => {
    const { page, context } = await newPortalPage(browser, svc);
    await signInThroughPortal(page, supervisor);
    await page.getByText('Kein Vorgang wartet auf eine Aufsicht.').waitFor();

    const created = await fx.createProcess({ items: [{ sku: 'WINE', amount: 1 }, { sku: 'WATER', amount: 2 }] });
    t.equal(created.status, 201, created.text);
    const id = created.body.id;
    const card = page.getByRole('article', { name: /^Alterskontrolle ab 18 · Gerät phone/ });
    await card.waitFor();
    t.match(await card.textContent(), /Rotwein \(ab 18 Jahren\).*5,99\s€.*Wasser.*1,98\s€.*Summe.*7,97\s€/, 'the cart in de-DE money, the restriction in words');
    t.notMatch(await card.textContent(), /min_age|pending/, 'no code of the API');
    t.match(await card.textContent(), /App-Nutzer\s*user/, "the app's user");
    t.match(await card.textContent(), /Zahlung\s*offen/, 'the payment state in words');
    t.ok(await appears(page.getByText('1 Vorgang wartet auf Sie')), 'one process, in the singular');
    t.ok(await appears(page.getByText('1 neu')), 'a badge says a new one arrived');
    t.match(await page.title(), /^\(1\) /, 'the tab title counts it too');
    t.equal(await card.getByRole('button', { name: 'Abbrechen' }).count(), 0, 'no "Abbrechen" that ends the purchase');
    await assertAccessible(t, page, 'supervision');
    await screenshot(page, 'supervision');

    await card.getByRole('button', { name: 'Alter bestätigt' }).click();
    await card.waitFor({ state: 'detached' });
    const approved = (await fx.getProcess(id)).body;
    t.equal(approved.supervisorApproval, true);
    t.match(approved.checks, [{ type: 'min_age', requiredAge: 18, state: 'successful', performedBy: 'portal:supervisor@example.com' }], 'the approval names the supervisor');
    const paid = await finishPayment(svc, fx, id, 'successful');
    t.equal(paid.paymentState, 'successful', "the app's process is paid after the approval");
    await context.close();
  });

  t.test('each waiting card says whose process it is and how long it has waited, counting on while shown (English)', async (t) => {
    const { page, context } = await newPortalPage(browser, svc, { locale: 'en-US' });
    await page.clock.install();
    await signInThroughPortal(page, supervisor, 'en');
    t.match(await page.getByRole('banner').textContent(), /Signed in as supervisor@example.com \(Supervisor\)/, 'the role in words');
    await page.getByText('No process waits for a supervisor.').waitFor();
    await fx.createProcess({ items: [{ sku: 'WINE', amount: 1 }], info: { clientID: 'till-app-7', appUserID: 'customer-42' } });
    await fx.createProcess({ items: [{ sku: 'RAZOR', amount: 1 }], info: { clientID: 'phone-9', appUserID: 'customer-77' } });
    const wine = page.getByRole('article', { name: /^Age check 18\+ · device till-app-7/ });
    const razor = page.getByRole('article', { name: /^Control · device phone-9/ });
    await wine.waitFor();
    await razor.waitFor();
    t.ok(await appears(page.getByText('2 processes wait for you')), 'two, in the plural');
    t.match(await wine.textContent(), /App user\s*customer-42/);
    t.match(await razor.textContent(), /App user\s*customer-77/);
    t.match(await wine.textContent(), /Rotwein \(18\+ only\)/, 'the restriction in English words');
    t.match(await wine.textContent(), /Waiting for\s*\d+ seconds?/, 'waiting for some seconds');
    await page.clock.fastForward('02:30');
    await wine.getByText(/^2 minutes$/).waitFor();
    t.pass('the waiting time counts on: 2 minutes after two and a half');
    await page.clock.fastForward('58:00');
    await wine.getByText(/^1 hour$/).waitFor();
    t.pass('an hour, in the singular');

    await razor.getByRole('button', { name: 'Control passed' }).click();
    await razor.waitFor({ state: 'detached' });
    t.ok(await appears(page.getByText('1 process waits for you')), 'one left, in the singular');
    await wine.getByRole('button', { name: 'Age confirmed' }).click();
    await page.getByText('No process waits for a supervisor.').waitFor();
    await context.close();
  });

  t.test('refusing a purchase asks first: keeping it changes nothing, confirming fails its payment', async (t) => {
    const { page, context } = await newPortalPage(browser, svc);
    await signInThroughPortal(page, supervisor);
    await page.getByText('Kein Vorgang wartet auf eine Aufsicht.').waitFor();
    const id = (await fx.createProcess({ items: [{ sku: 'WINE', amount: 1 }], info: { clientID: 'kasse-3' } })).body.id;
    const card = page.getByRole('article', { name: /Gerät kasse-3/ });
    await card.waitFor();

    await card.getByRole('button', { name: 'Kauf ablehnen' }).click();
    const dialog = page.getByRole('dialog', { name: 'Kauf ablehnen?' });
    await dialog.waitFor();
    t.match(await dialog.textContent(), /Gerät kasse-3 \(5,99\s€\) endet ohne Zahlung/, 'the question says whose purchase ends');
    t.equal(await page.evaluate('document.activeElement?.textContent'), 'Nicht ablehnen', 'the safe answer has the focus');
    await assertAccessible(t, page, 'the question before refusing');
    await dialog.getByRole('button', { name: 'Nicht ablehnen' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await card.getByRole('button', { name: 'Kauf ablehnen' }).click();
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    t.match((await fx.getProcess(id)).body, { paymentState: 'pending', aborted: false }, 'keeping it (or Escape) changes nothing');
    t.ok(await card.isVisible(), 'the card stays');

    await card.getByRole('button', { name: 'Kauf ablehnen' }).click();
    await dialog.getByRole('button', { name: 'Ja, Kauf ablehnen' }).click();
    await page.getByText('Kein Vorgang wartet auf eine Aufsicht.').waitFor();
    t.match((await fx.getProcess(id)).body, { paymentState: 'failed', aborted: false }, 'the payment failed');
    await context.close();
  });

  t.test('a change of the shop picker to the shop already chosen keeps the live list', async (t) => {
    const { page, context } = await newPortalPage(browser, svc);
    await signInThroughPortal(page, supervisor);
    await page.getByText('Kein Vorgang wartet auf eine Aufsicht.').waitFor();
    const picker = page.getByLabel('Shop');
    t.equal(await picker.inputValue(), 's1');
    await picker.selectOption('s1');
    await picker.dispatchEvent('change');
    await page.getByText('Kein Vorgang wartet auf eine Aufsicht.').waitFor();
    t.equal(await page.getByText('Lädt …').count(), 0, 'not loading for good');
    await fx.createProcess({ items: [{ sku: 'WINE', amount: 1 }] });
    await page.getByText('1 Vorgang wartet auf Sie').waitFor();
    t.pass('a new process still arrives live');
    await page.getByRole('article').getByRole('button', { name: 'Alter bestätigt' }).click();
    await page.getByText('Kein Vorgang wartet auf eine Aufsicht.').waitFor();
    await context.close();
  });

  t.test('fits a phone (390 x 844)', async (t) => {
    const { page, context } = await newPortalPage(browser, svc, { viewport: Viewports.phone });
    await page.goto('/portal/');
    await assertFitsWidth(t, page, 'sign-in on a phone');
    await signInThroughPortal(page, supervisor);
    await fx.createProcess({ items: [{ sku: 'WINE', amount: 1 }] });
    await page.getByRole('article').first().waitFor();
    await assertFitsWidth(t, page, 'supervision on a phone');
    await assertAccessible(t, page, 'supervision on a phone');
    await context.close();
  });
}
