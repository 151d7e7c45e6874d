import type { FunctionComponent } from 'preact';
import { html } from 'htm/preact';
import type { ProjectApi } from '../api.js';
import { useWords } from '../i18n.js';
import type { Session } from '../session.js';
import { Catalog } from './catalog/index.js';
import { Clients } from './clients/index.js';
import { Closings } from './closings/index.js';
import { Coupons } from './coupons/index.js';
import { Orders } from './orders.js';
import { Promotions } from './promotions/index.js';
import { Accounts } from './accounts.js';
import { Integrations } from './integrations/index.js';
import { Settings } from './settings.js';
import { Shops } from './shops.js';
import { Supervision } from './supervision.js';
import { Today } from './today.js';

export interface ScreenProps {
  api: ProjectApi;
  session: Session;
  navigate(screen: string): void;
}

export interface ScreenEntry {
  id: string;
  /** The API permission the screen needs to be offered at all. */
  permission: string;
  Title: FunctionComponent;
  Screen: FunctionComponent<ScreenProps>;
}

function title(de: string, en: string): FunctionComponent {
  const words = { de: { title: de }, en: { title: en } };
  return function Title() {
    return html`${useWords(words)('title')}`;
  };
}

/** Every screen, in the navigation's order. */
export const Screens: ScreenEntry[] = [
  { id: 'today', permission: 'ordersRead', Title: title('Heute', 'Today'), Screen: Today },
  { id: 'supervision', permission: 'supervisor', Title: title('Aufsicht', 'Supervision'), Screen: Supervision },
  { id: 'orders', permission: 'ordersRead', Title: title('Bestellungen', 'Orders'), Screen: Orders },
  { id: 'closings', permission: 'closingsRead', Title: title('Abschlüsse', 'Closings'), Screen: Closings },
  { id: 'catalog', permission: 'productsRead', Title: title('Katalog', 'Catalog'), Screen: Catalog },
  { id: 'coupons', permission: 'couponsRead', Title: title('Gutscheine', 'Coupons'), Screen: Coupons },
  { id: 'promotions', permission: 'promotionsRead', Title: title('Aktionen', 'Promotions'), Screen: Promotions },
  { id: 'shops', permission: 'shopsRead', Title: title('Shops', 'Shops'), Screen: Shops },
  { id: 'settings', permission: 'projectsWrite', Title: title('Einstellungen', 'Settings'), Screen: Settings },
  { id: 'integrations', permission: 'projectsWrite', Title: title('Integrationen', 'Integrations'), Screen: Integrations },
  { id: 'clients', permission: 'projectsWrite', Title: title('Apps & Dienste', 'Clients'), Screen: Clients },
  { id: 'accounts', permission: 'projectsWrite', Title: title('Konten', 'Accounts'), Screen: Accounts },
];
