import { acceptedLanguages, pickTranslation } from '../../src/domain/coupons/translations.js';
import { couponPath, imagePath, type Coupon, type StoredCoupon } from '../../subjects/coupons.js';
import { DefaultSettings } from '../../subjects/settings.js';

/** Who a coupon is answered for: the languages they accept, and where images are served. */
export interface Reader {
  acceptLanguage?: string | undefined;
  baseUrl: string;
}

/**
 * A stored coupon as the API answers it: the spec's fields, and the SDKs' fields derived from them
 * (name and description in the reader's language, image urls). `locale` is the project's (null:
 * the default settings').
 */
export function toCoupon(project: string, id: string, doc: StoredCoupon, locale: string | null, reader: Reader): Coupon {
  const accepted = acceptedLanguages(reader.acceptLanguage);
  const defaultLocale = locale ?? DefaultSettings.locale;
  const text = (texts: Record<string, string>) => pickTranslation(texts, accepted, defaultLocale);
  const { translations } = doc;
  const optionalText = (key: 'promotionDescription' | 'disclaimer') => {
    const texts = translations[key];
    return texts && Object.keys(texts).length ? { [key]: text(texts) } : {};
  };
  return {
    id,
    projectID: project,
    channels: doc.channels,
    type: doc.type,
    redeemType: doc.redeemType,
    processingType: doc.processingType,
    requiresLoyaltyCard: doc.requiresLoyaltyCard,
    validFrom: doc.validFrom,
    validUntil: doc.validUntil,
    translations,
    additionalAttributes: doc.additionalAttributes,
    name: text(translations.name),
    description: text(translations.description),
    ...optionalText('promotionDescription'),
    ...optionalText('disclaimer'),
    code: doc.code,
    codes: doc.codes,
    colors: doc.colors,
    ...(doc.image
      ? {
          image: {
            name: doc.image.name,
            formats: doc.image.formats.map((f) => ({
              size: f.size,
              url: `${reader.baseUrl}${imagePath(project, f.ref)}`,
              contentType: f.contentType,
              width: f.width,
              height: f.height,
            })),
          },
        }
      : {}),
    links: { self: { href: couponPath(project, id) } },
  };
}

/** The codes that name a coupon when scanned: its codes and the code the apps show, once each. */
export function scannableCodes(doc: StoredCoupon): string[] {
  return [...new Set([...doc.codes.map((c) => c.code), ...(doc.code ? [doc.code] : [])])];
}
