import { minorUnitDigits } from '../../subjects/formats/money.js';
import type { AppMetadata } from '../../subjects/clients.js';
import type { Settings } from '../../subjects/settings.js';
import type { Shop } from '../../subjects/shops.js';

/**
 * The metadata document of an app, as the public app SDKs read it (docs/api.md, "Connecting the app
 * SDK"). Every link leads to a route of the platform; hrefs are relative, and the SDKs put their
 * base URL before them. What each SDK needs of it, from their sources:
 *
 * - Android (snabble/Android-SDK `Snabble.readMetadata`, `Project.parse`): `links.createAppUser`
 *   (it appends `?project=<id>`), `appUser`, `appUserOrders`, `consents`; per project `id`,
 *   `links` whose every entry is `{href: string}`, `tokens` without a query (it appends
 *   `?role=retailerApp`), and `customerCards` as an object: its absence is a NullPointerException
 *   that loses the whole project.
 * - iOS (snabble/snabble-ios-sdk `Metadata`, `Project`): `metadata.kill`, `links.appUser`,
 *   `appUserOrders`, `createAppUser`, `self`; per project `id`, `name`, `currency`,
 *   `decimalDigits`, `locale`, `roundingMode` (`up`, `down` or `commercial`), and the links
 *   `appdb`, `appEvents`, `checkoutInfo`, `tokens`, all required.
 *
 * Products are looked up through `appdb` (no offline database is offered: it answers 304, see the
 * appdb route); the SDKs' online look-ups (`resolvedProductBySku`, `resolvedProductLookUp`) are
 * not offered.
 */
export function appMetadata(input: { appID: string; project: string; platform: string; version: string; settings: Settings; shops: Shop[] }): AppMetadata {
  const { appID, project, settings } = input;
  const p = `/${encodeURIComponent(project)}`;
  return {
    links: {
      self: { href: `/metadata/app/${appID}/${encodeURIComponent(input.platform)}/${encodeURIComponent(input.version)}` },
      createAppUser: { href: `/apps/${appID}/users` },
      appUser: { href: '/apps/users/{appUserID}' },
      appUserOrders: { href: `${p}/users/{appUserID}/orders` },
      consents: { href: '/apps/users/{appUserID}/consents' },
    },
    metadata: { kill: false },
    projects: [
      {
        id: project,
        name: settings.companyName || project,
        currency: settings.currency,
        decimalDigits: minorUnitDigits(settings.currency),
        // The SDKs read a Java-style locale (de_DE); the settings hold a BCP 47 tag (de-DE).
        locale: settings.locale.replace(/-/g, '_'),
        // Amounts round half away from zero: the SDKs' `commercial`.
        roundingMode: 'commercial',
        enableCheckout: true,
        customerCards: { accepted: [] },
        shops: input.shops,
        links: {
          self: { href: `${p}/settings` },
          tokens: { href: `${p}/tokens` },
          checkoutInfo: { href: `${p}/checkout/info` },
          appdb: { href: `${p}/appdb` },
          appEvents: { href: `${p}/events` },
          shops: { href: `${p}/shops` },
          coupons: { href: `${p}/coupons` },
        },
      },
    ],
    gatewayCertificates: [],
  };
}
