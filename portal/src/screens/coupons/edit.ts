import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type ProjectApi } from '../../api.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Field, useId } from '../../ui.js';

export interface Coupon {
  id: string;
  name: string;
  code: string | null;
  type: string;
  channels: string[];
  redeemType: string | null;
  processingType: string | null;
  requiresLoyaltyCard: boolean;
  validFrom: string | null;
  validUntil: string | null;
  translations: { name: Record<string, string>; description: Record<string, string> } & Record<string, unknown>;
  additionalAttributes: Record<string, unknown>;
  codes: Array<{ code: string; template: string }>;
  colors: { background: string; foreground: string };
  image?: { name?: string; formats: Array<{ url: string; size: string }> };
}

const words = {
  de: {
    title: 'Gutschein bearbeiten',
    name: 'Name (deutsch)',
    description: 'Beschreibung (deutsch)',
    code: 'Code',
    validFrom: 'Gültig ab',
    validUntil: 'Gültig bis',
    image: 'Bild (PNG, JPEG, WebP, GIF)',
    preview: 'Bild des Gutscheins',
    uploaded: 'Bild hochgeladen.',
    save: 'Gutschein speichern',
    saved: 'Gespeichert.',
    conflict: 'Zwischenzeitlich geändert: neu laden oder überschreiben.',
    reload: 'Neu laden',
    overwrite: 'Überschreiben',
  },
  en: {
    title: 'Edit coupon',
    name: 'Name (German)',
    description: 'Description (German)',
    code: 'Code',
    validFrom: 'Valid from',
    validUntil: 'Valid until',
    image: 'Image (PNG, JPEG, WebP, GIF)',
    preview: "The coupon's image",
    uploaded: 'Image uploaded.',
    save: 'Save coupon',
    saved: 'Saved.',
    conflict: 'Changed meanwhile: reload or overwrite.',
    reload: 'Reload',
    overwrite: 'Overwrite',
  },
};

interface Draft {
  name: string;
  description: string;
  code: string;
  validFrom: string;
  validUntil: string;
  imageRef: string | null;
}

/** `datetime-local` values are local times; the API takes instants. */
const toLocal = (iso: string | null) => {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocal = (value: string) => (value ? new Date(value).toISOString() : null);

const draftOf = (c: Coupon): Draft => ({
  name: c.translations.name.de ?? c.name,
  description: c.translations.description.de ?? '',
  code: c.code ?? '',
  validFrom: toLocal(c.validFrom),
  validUntil: toLocal(c.validUntil),
  imageRef: null,
});

/** The body of a PUT: the coupon as loaded, with the person's changes. */
function bodyOf(c: Coupon, d: Draft) {
  const image = d.imageRef ? { ref: d.imageRef } : c.image ? { name: c.image.name ?? '', formats: c.image.formats.map((f) => ({ url: f.url, size: f.size })) } : null;
  return {
    channels: c.channels,
    type: c.type,
    redeemType: c.redeemType,
    processingType: c.processingType,
    requiresLoyaltyCard: c.requiresLoyaltyCard,
    validFrom: fromLocal(d.validFrom),
    validUntil: fromLocal(d.validUntil),
    translations: { ...c.translations, name: { ...c.translations.name, de: d.name }, description: { ...c.translations.description, de: d.description } },
    additionalAttributes: c.additionalAttributes,
    code: d.code || null,
    codes: c.codes,
    colors: c.colors,
    image,
  };
}

/**
 * One coupon's form. Saving sends If-Match with the ETag it was loaded with: when another tab or
 * person saved meanwhile (412), the person chooses to reload (their changes go) or to overwrite.
 */
export function EditCoupon({ api, id, canWrite }: { api: ProjectApi; id: string; canWrite: boolean }) {
  const t = useWords(words);
  const [loaded, setLoaded] = useState<{ coupon: Coupon; etag: string } | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [conflict, setConflict] = useState(false);
  const [status, setStatus] = useState('');
  const [error, setError] = useState<unknown>();
  const ids = { name: useId('name'), description: useId('description'), code: useId('code'), from: useId('from'), until: useId('until'), image: useId('image') };
  const path = `/coupons/${encodeURIComponent(id)}`;

  const load = async () => {
    try {
      const answer = await api.call<Coupon>('GET', path, { headers: { 'accept-language': 'de' } });
      setLoaded({ coupon: answer.body, etag: answer.headers.get('etag') ?? '' });
      setDraft(draftOf(answer.body));
      setConflict(false);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), [id]);
  if (!loaded || !draft) return html`<${ErrorMessage} error=${error} />`;

  const save = async (ifMatch: string) => {
    setError(undefined);
    setStatus('');
    try {
      const answer = await api.call<Coupon>('PUT', path, { body: bodyOf(loaded.coupon, draft), headers: { 'if-match': ifMatch, 'accept-language': 'de' } });
      setLoaded({ coupon: answer.body, etag: answer.headers.get('etag') ?? '' });
      setDraft({ ...draftOf(answer.body) });
      setConflict(false);
      setStatus(t('saved'));
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) setConflict(true);
      else setError(err);
    }
  };
  const upload = async (event: Event) => {
    const file = (event.target as HTMLInputElement).files?.[0];
    if (!file) return;
    try {
      const image = await api.send<{ ref: string }>('POST', '/coupons/images', undefined, { raw: { data: file, contentType: file.type || 'application/octet-stream' } });
      setDraft({ ...draft, imageRef: image.ref });
      setStatus(t('uploaded'));
    } catch (err) {
      setError(err);
    }
  };
  const input = (key: keyof Draft) => (e: Event) => setDraft({ ...draft, [key]: (e.target as HTMLInputElement).value });
  const previewUrl = draft.imageRef ? api.url(`/coupons/images/${draft.imageRef}`) : loaded.coupon.image?.formats[0]?.url;

  return html`<section class="panel" aria-labelledby="coupon-title">
    <h2 id="coupon-title">${t('title')}: ${loaded.coupon.name || loaded.coupon.id}</h2>
    <form onSubmit=${(e: Event) => (e.preventDefault(), save(loaded.etag))}>
      <fieldset disabled=${!canWrite}>
        <${Field} id=${ids.name} label=${t('name')}><input id=${ids.name} value=${draft.name} onInput=${input('name')} /><//>
        <${Field} id=${ids.description} label=${t('description')}><textarea id=${ids.description} rows="3" value=${draft.description} onInput=${input('description')}></textarea><//>
        <div class="row">
          <${Field} id=${ids.code} label=${t('code')}><input id=${ids.code} value=${draft.code} onInput=${input('code')} /><//>
          <${Field} id=${ids.from} label=${t('validFrom')}><input id=${ids.from} type="datetime-local" value=${draft.validFrom} onInput=${input('validFrom')} /><//>
          <${Field} id=${ids.until} label=${t('validUntil')}><input id=${ids.until} type="datetime-local" value=${draft.validUntil} onInput=${input('validUntil')} /><//>
        </div>
        <${Field} id=${ids.image} label=${t('image')}><input id=${ids.image} type="file" accept="image/png,image/jpeg,image/webp,image/gif" onChange=${upload} /><//>
        ${previewUrl ? html`<img class="coupon-image" src=${previewUrl} alt=${t('preview')} />` : null}
      </fieldset>
      ${conflict
        ? html`<div class="error" role="alert">
            <p>${t('conflict')}</p>
            <div class="actions">
              <button type="button" class="secondary" onClick=${load}>${t('reload')}</button>
              <button type="button" class="danger" onClick=${() => save('*')}>${t('overwrite')}</button>
            </div>
          </div>`
        : null}
      <${ErrorMessage} error=${error} />
      <p role="status">${status}</p>
      ${canWrite ? html`<button type="submit">${t('save')}</button>` : null}
    </form>
  </section>`;
}
