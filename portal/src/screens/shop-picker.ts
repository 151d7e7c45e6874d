import { html } from 'htm/preact';
import { useEffect } from 'preact/hooks';
import type { ProjectApi } from '../api.js';
import { useWords } from '../i18n.js';
import { ErrorMessage, useId, useLoad } from '../ui.js';

export interface ShopSummary {
  id: string;
  name: string;
  city?: string;
}

const words = { de: { shop: 'Shop', all: 'Alle Shops' }, en: { shop: 'Shop', all: 'All shops' } };

export function useShops(api: ProjectApi) {
  return useLoad((signal) => api.get<ShopSummary[]>('/shops', { signal }), [api]);
}

/**
 * Chooses a shop of the project (or all of them, where a screen allows it). A change to the shop
 * already chosen (assistive tools and automation fire one) is no choice: `onChange` is not called.
 */
export function ShopPicker({ api, value, onChange, allowAll = false }: { api: ProjectApi; value: string; onChange(shop: string): void; allowAll?: boolean }) {
  const t = useWords(words);
  const id = useId('shop');
  const shops = useShops(api);
  const first = shops.data?.[0]?.id;
  useEffect(() => {
    if (!allowAll && first && !shops.data?.some((s) => s.id === value)) onChange(first);
  }, [first, value]);
  return html`<div class="field inline">
    <label for=${id}>${t('shop')}</label>
    <select id=${id} value=${value} onChange=${(e: Event) => {
      const chosen = (e.target as HTMLSelectElement).value;
      if (chosen !== value) onChange(chosen);
    }}>
      ${allowAll ? html`<option value="">${t('all')}</option>` : null}
      ${(shops.data ?? []).map((s) => html`<option value=${s.id}>${s.name || s.id}${s.city ? ` (${s.city})` : ''}</option>`)}
    </select>
    <${ErrorMessage} error=${shops.error} />
  </div>`;
}
