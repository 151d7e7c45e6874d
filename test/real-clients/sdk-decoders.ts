/**
 * What the real client SDKs REQUIRE of the platform's JSON answers.
 *
 * Written by hand from reading the public SDK sources (no code copied):
 *   - snabble/snabble-ios-sdk  (Swift, Codable + JSONDecoder with a custom ISO 8601 date strategy)
 *   - snabble/Android-SDK      (Kotlin/Java, Gson via GsonHolder = `new GsonBuilder().create()`)
 *
 * Conventions used below
 * ----------------------
 * iOS (Codable):
 *   - a non-optional Swift property decoded with `decode` => key REQUIRED, value non-null, exact JSON type.
 *   - an optional property (`T?`, `decodeIfPresent`) => key may be absent OR null  => `.nullish()`.
 *   - `Int` rejects strings ("12") and non-integral numbers (1.5); `String` rejects numbers.
 *   - enums WITHOUT an unknown-case fallback => only the listed values decode (`z.enum`); an unknown
 *     value makes the whole enclosing struct fail (and, unless the array is wrapped in
 *     `FailableDecodable`, the whole response fails => the app shows a generic error).
 *   - enums WITH `UnknownCaseRepresentable` => any string decodes (`z.string()`), the known values are
 *     exported as `...Known` constants; unknown values are mapped to a fallback case (note which!).
 *   - `[FailableDecodable<T>]` arrays: the array must be an array, but an element that fails to decode
 *     is silently DROPPED. Those arrays are typed `z.array(z.unknown())` in the "decodes" schema and the
 *     element schema is exported separately (an element must match it to be KEPT). The `...Kept`
 *     variants require every element to be kept.
 *   - dates use `.customISO8601`: `ISO8601DateFormatter` with `.withInternetDateTime`, first with
 *     `.withFractionalSeconds`, then without => "2024-05-02T10:11:12Z", "2024-05-02T10:11:12.345Z",
 *     "2024-05-02T12:11:12+02:00" decode; a missing zone or a date-only string does not.
 *   - only HTTP 200 and 201 are success (Project+Network.swift `perform`): 204 or any other 2xx is an error.
 *
 * Android (Gson, no custom adapters):
 *   - every field is nullable at runtime; Kotlin defaults apply when a key is ABSENT (data classes with
 *     all-default constructors), but an explicit JSON `null` overwrites a non-null Kotlin `List` with
 *     null => NullPointerException later (e.g. `checks.any {}` in Checkout.kt). So lists must be absent
 *     or arrays, never null.
 *   - unknown enum strings become `null` (no decode failure). The flow then treats them as "other"
 *     (e.g. paymentState null => keeps polling forever).
 *   - a JSON type mismatch (object where a string/number is expected, 1.5 for an Int) throws
 *     JsonSyntaxException => the whole response is treated as a connection error.
 *     Gson is lenient the other way: a quoted number "12" is accepted for Int, a number for String.
 *
 * Versions: both SDKs changed over time. Where versions differ materially this is noted; the schemas
 * follow the newest stored version unless said otherwise.
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------
// Shared building blocks
// ---------------------------------------------------------------------------------------------

/** iOS `Link` (snabble/snabble-ios-sdk Core/Sources/Metadata/Link.swift): `href: String` required. */
export const IosLink = z.object({ href: z.string() });

/** Android `Href` (snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt): href nullable. */
export const AndroidHref = z.object({ href: z.string().nullish() });

/** Integer as decoded by Swift `Int` / Kotlin `Int`. */
const Int = z.number().int();

/**
 * iOS date (snabble/snabble-ios-sdk Core/Sources/API/Utilities.swift, `JSONDecoder.DateDecodingStrategy.customISO8601`).
 * RFC 3339 internet date-time, fractional seconds optional, zone REQUIRED (Z or ±hh:mm with colon).
 * Fractional seconds: 3 digits are what the SDK itself writes; longer fractions are accepted by this
 * regex but not verified against Apple's formatter.
 */
export const IosDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/, 'not an ISO 8601 internet date-time with zone');

/**
 * Android order date (snabble/Android-SDK core/src/main/java/io/snabble/sdk/ReceiptsApi.java):
 * `SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")`, UTC. Exactly millisecond precision and a literal
 * `Z`; anything else => ParseException => that order is silently skipped in the purchase list.
 * (More than 3 fraction digits are parsed leniently as a millisecond COUNT => wrong time.)
 */
export const AndroidOrderDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'Android ReceiptsApi needs yyyy-MM-ddTHH:mm:ss.SSSZ');

/** Android coupon dates: `ZonedDateTime.parse` (ISO_ZONED_DATE_TIME) => offset required, fraction optional. */
export const AndroidZonedDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})(\[[^\]]+\])?$/, 'not a zoned ISO date-time');

// ---------------------------------------------------------------------------------------------
// Enumerations as the SDKs list them
// ---------------------------------------------------------------------------------------------

/**
 * iOS `Units` (snabble/snabble-ios-sdk Core/Sources/Products/Units.swift). NO unknown fallback:
 * used for `LineItem.weightUnit` / `LineItem.referenceUnit`; an unknown unit fails the line item and
 * therefore the whole CheckoutInfo / CheckoutProcess (line items are not failable).
 */
export const IosUnits = z.enum([
  'm', 'dm', 'cm', 'mm',
  'l', 'dl', 'cl', 'ml',
  'm2', 'm2e-1', 'dm2', 'm2e-3', 'cm2',
  'm3', 'cm3',
  't', 'kg', 'dag', 'hg', 'g',
  'piece', 'price',
]);

/**
 * Android `Unit.fromString` (snabble/Android-SDK core/src/main/java/io/snabble/sdk/Unit.java, older Java
 * version): ml, dl, l, m3, cm3, m2, cm2, mm, cm, m, kg, g, t, piece, price. Line items keep units as
 * plain strings, so unknown units do not break decoding.
 */
export const AndroidUnitsKnown = ['ml', 'dl', 'l', 'm3', 'cm3', 'm2', 'cm2', 'mm', 'cm', 'm', 'kg', 'g', 't', 'piece', 'price'] as const;

/** iOS `LineItemType` (CheckoutData.swift) has an unknown fallback; unknown line items are FILTERED OUT. */
export const IosLineItemTypeKnown = ['default', 'deposit', 'discount', 'coupon', 'depositReturnVoucher', 'depositReturn'] as const;
/** Android `LineItemType` (CheckoutApi.kt): newest list; older versions had `giveaway` instead of the voucher types. */
export const AndroidLineItemTypeKnown = ['default', 'deposit', 'discount', 'coupon', 'depositReturnVoucher', 'depositReturn', 'giveaway'] as const;

/**
 * iOS `RawPaymentMethod` (Core/Sources/Payment/PaymentMethods.swift). NO fallback, but it is used inside
 * `[FailableDecodable<PaymentMethodDescription>]` => an unknown id only drops that payment method.
 */
export const IosRawPaymentMethod = z.enum([
  'qrCodePOS', 'qrCodeOffline', 'deDirectDebit', 'creditCardVisa', 'creditCardMastercard',
  'creditCardAmericanExpress', 'externalBilling', 'gatekeeperTerminal', 'customerCardPOS',
  'paydirektOneKlick', 'applePay', 'postFinanceCard', 'twint',
]);

/** Android `PaymentMethod` ids (core/src/main/java/io/snabble/sdk/PaymentMethod.kt); unknown => null / filtered. */
export const AndroidPaymentMethodKnown = [
  'qrCodePOS', 'qrCodeOffline', 'deDirectDebit', 'creditCardVisa', 'creditCardMastercard',
  'creditCardAmericanExpress', 'externalBilling', 'customerCardPOS', 'gatekeeperTerminal',
  'paydirektOneKlick', 'postFinanceCard', 'twint', 'googlePay',
] as const;

/**
 * iOS `AcceptedOriginType` (CheckoutData.swift). NO fallback: an unknown origin type inside
 * `paymentMethods[].acceptedOriginTypes` drops that payment method (failable element).
 */
export const IosAcceptedOriginType = z.enum([
  'iban', 'ipgHostedDataID', 'tegutEmployeeID', 'paydirektCustomerAuthorization', 'datatransAlias',
  'datatransCreditCardAlias', 'payonePseudoCardPAN', 'payoneSepaData', 'contactPersonCredentials',
]);

/** iOS `PaymentState` (CheckoutData.swift), fallback `unknown`. Android `CheckState` has the same values. */
export const PaymentStateKnown = ['pending', 'processing', 'transferred', 'successful', 'failed', 'unauthorized'] as const;

/** `RoutingTarget`: iOS fallback is `none`; Android unknown => null (treated like none). */
export const RoutingTargetKnown = ['none', 'supervisor', 'gatekeeper'] as const;

/** Fulfillment states (iOS CheckoutData.swift `FulfillmentState`, Android FulfillmentState.kt). */
export const FulfillmentStateKnown = [
  'open', 'allocating', 'allocated', 'processing', // working
  'processed', // success
  'aborted', 'allocationFailed', 'allocationTimedOut', 'failed', // failure
] as const;
export const FulfillmentState = z.enum(FulfillmentStateKnown);

/**
 * iOS check state (newest: Core/Sources/Cart/CheckoutProcess+Checks.swift): pending, postponed,
 * successful, failed. The unknown fallback is **failed**: any other value (e.g. `processing`) makes the
 * iOS app treat the check as FAILED and reject the checkout. Older iOS versions used `unknown` instead.
 */
export const IosCheckState = z.enum(['pending', 'postponed', 'successful', 'failed']);
/** Older iOS `Check.Type` (CheckoutProcess+Check.swift, 2021): fallback unknown. */
export const IosCheckTypeKnown = ['min_age', 'supervisor_approval', 'verify_debit_card'] as const;
/** Older iOS `Check.Method`: fallback unknown. */
export const IosCheckMethodKnown = ['none', 'control', 'partialRescan', 'rescan', 'gatekeeper'] as const;
/** Android `CheckState` (CheckoutApi.kt) — also used for paymentState. Unknown => null. */
export const AndroidCheckStateKnown = ['unauthorized', 'pending', 'processing', 'successful', 'transferred', 'failed'] as const;
/** Android `CheckType`. */
export const AndroidCheckTypeKnown = ['min_age', 'supervisor_approval'] as const;
/** Android `Performer` (performedBy). */
export const AndroidPerformerKnown = ['app', 'supervisor', 'backend', 'payment'] as const;

/** iOS `CheckoutInfo.Violation.Type` (fallback unknown). */
export const IosViolationTypeKnown = [
  'coupon_invalid', 'coupon_currently_not_valid', 'coupon_already_voided',
  'deposit_return_voucher_duplicate', 'redeemingFailed', 'invalid_line_item',
] as const;
/** Android `ViolationType` (newest CheckoutApi.kt); unknown => null => violation ignored. */
export const AndroidViolationTypeKnown = [
  'deposit_return_voucher_already_redeemed', 'deposit_return_voucher_duplicate',
  'coupon_already_voided', 'coupon_currently_not_valid', 'coupon_invalid',
] as const;

/** iOS `RequiredInformationType`: ONLY `taxation`, NO fallback. Values used: inHouse, takeaway. */
export const IosRequiredInformationId = z.enum(['taxation']);
export const TaxationValuesKnown = ['inHouse', 'takeaway'] as const;

/** iOS `CheckoutProcess.VoucherInformation.VoucherState`: NO fallback (breaks the whole process decode). */
export const IosVoucherState = z.enum(['pending', 'redeemed', 'redeemingFailed', 'rolledback', 'rollbackFailed']);

/** iOS `CouponType`: newest has printed, digital (+ unknown fallback); some versions also `manual`. */
export const IosCouponTypeKnown = ['printed', 'digital', 'manual'] as const;
/**
 * Android `CouponType` (core/src/main/java/io/snabble/sdk/coupons/Coupon.kt): manual, printed, digital.
 * Unknown => null, and `Coupon.isValid` does an exhaustive `when(type)` => NullPointerException inside
 * the OkHttp callback (app crash) when the coupon list is loaded. Send only these three values.
 */
export const AndroidCouponType = z.enum(['manual', 'printed', 'digital']);

/** iOS `ErrorResponseType` (Core/Sources/API/Project+Network.swift), fallback unknown. */
export const IosErrorTypeKnown = [
  'invalid_cart_item', 'shop_not_found', 'bad_shop_id', 'no_available_method', 'checkout_unavailable',
  'sale_stop', 'product_not_found', 'client_error',
] as const;
/** Android checkout-info error types it reacts to (DefaultCheckoutApi.kt); others => "unknown error". */
export const AndroidCheckoutInfoErrorTypeKnown = [
  'invalid_cart_item', 'no_available_method', 'bad_shop_id', 'shop_not_found', 'invalid_deposit_return_voucher',
] as const;

/** iOS `ScanFormat` (Project.swift), fallback unknown — used by `exitToken.format`. */
export const IosScanFormatKnown = ['ean13', 'ean8', 'code128', 'itf14', 'code39', 'qr', 'datamatrix', 'pdf417'] as const;

/** Android `Shop.Service` (core/src/main/java/io/snabble/sdk/Shop.java); unknown => null array entry. */
export const AndroidShopServiceKnown = ['euro', 'bakery', 'butcher', 'creditcard', 'fishmonger', 'nonfood', 'parking'] as const;

// ---------------------------------------------------------------------------------------------
// Shop (entry of the shop list given to the app: project metadata `shops`, `activeShops` endpoint)
// ---------------------------------------------------------------------------------------------

// snabble/snabble-ios-sdk Core/Sources/Metadata/Shop.swift (struct OpeningHoursSpecification)
export const IosOpeningHoursSpecification = z.object({
  opens: z.string(),
  closes: z.string(),
  dayOfWeek: z.string(),
});

// snabble/snabble-ios-sdk Core/Sources/Metadata/Shop.swift (struct ShopService)
export const IosShopService = z.object({
  serviceID: z.string(),
  iconURL: z.string(),
  translations: z.record(z.string(), z.string()),
});

/**
 * snabble/snabble-ios-sdk Core/Sources/Metadata/Shop.swift (struct Shop, custom init(from:)).
 * Everything but externalId/external/shopServices/countryCode/customerNetworks is REQUIRED, non-null.
 * `id` and `project` are `Identifier<…>` with String raw value => must be JSON strings (an int id fails).
 * Failure mode: in project metadata the shops are decoded with `try?` => ONE bad shop empties the
 * whole shop list silently (Project.swift); the `activeShops` answer `{shops: [Shop]}` fails entirely.
 */
export const IosShop = z.object({
  id: z.string(),
  name: z.string(),
  project: z.string(),
  externalId: z.string().nullish(),
  external: z.record(z.string(), z.unknown()).nullish(), // must be an OBJECT if present
  lat: z.number(),
  lon: z.number(),
  services: z.array(z.string()),
  shopServices: z.array(IosShopService).nullish(),
  openingHoursSpecification: z.array(IosOpeningHoursSpecification),
  email: z.string(),
  phone: z.string(),
  city: z.string(),
  street: z.string(),
  zip: z.string(),
  state: z.string(),
  country: z.string(),
  countryCode: z.string().nullish(),
  customerNetworks: z.array(z.object({ ssid: z.string() })).nullish(),
});

// snabble/snabble-ios-sdk Core/Sources/Metadata/Shop.swift (struct ActiveShops)
export const IosActiveShops = z.object({ shops: z.array(IosShop) });

/**
 * snabble/Android-SDK core/src/main/java/io/snabble/sdk/Shop.java (class Shop, Gson).
 * All fields nullable; wrong JSON types (e.g. an object for `name`) make `Shop.fromJson` return null
 * => no shops at all. lat/lon are Java `double` (null keeps 0). Numbers are accepted for String fields.
 */
export const AndroidShop = z.object({
  id: z.union([z.string(), z.number()]).nullish(),
  externalId: z.union([z.string(), z.number()]).nullish(),
  name: z.string().nullish(),
  services: z.array(z.string().nullable()).nullish(),
  street: z.string().nullish(),
  zip: z.union([z.string(), z.number()]).nullish(),
  city: z.string().nullish(),
  country: z.string().nullish(),
  state: z.string().nullish(),
  phone: z.union([z.string(), z.number()]).nullish(),
  links: z.record(z.string(), AndroidHref).nullish(),
  lat: z.number().nullish(),
  lon: z.number().nullish(),
  customerNetworks: z.array(z.object({ ssid: z.string().nullish() })).nullish(),
  openingHoursSpecification: z
    .array(z.object({ opens: z.string().nullish(), closes: z.string().nullish(), dayOfWeek: z.string().nullish() }))
    .nullish(),
  external: z.unknown().optional(), // JsonElement: anything
});

/** What both SDKs need from one shop entry (iOS is the binding constraint). */
export const Shop = IosShop;

// ---------------------------------------------------------------------------------------------
// Checkout info
// ---------------------------------------------------------------------------------------------

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutInfo.LineItem.PriceModifier)
export const IosPriceModifier = z.object({
  name: z.string(),
  action: z.string().nullish(), // Action: add | replace, fallback unknown
  price: Int,
});

/**
 * snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutInfo.LineItem, synthesized Codable).
 * Required: id (String), amount (Int), type (String; unknown types are decoded then filtered out).
 * weightUnit / referenceUnit are strict `Units` (see IosUnits) — an unknown or empty-string unit fails
 * the line item and with it the whole CheckoutInfo / CheckoutProcess.
 */
export const IosLineItem = z.object({
  id: z.string(),
  sku: z.string().nullish(),
  name: z.string().nullish(),
  amount: Int,
  price: Int.nullish(),
  weight: Int.nullish(),
  units: Int.nullish(),
  totalPrice: Int.nullish(),
  scannedCode: z.string().nullish(),
  type: z.string(),
  refersTo: z.string().nullish(),
  fulfillmentType: z.string().nullish(),
  weightUnit: IosUnits.nullish(),
  referenceUnit: IosUnits.nullish(),
  priceModifiers: z.array(IosPriceModifier).nullish(),
  couponID: z.string().nullish(),
  discountID: z.string().nullish(),
  discountRuleID: z.string().nullish(),
  discountType: z.string().nullish(),
  redeemed: z.boolean().nullish(),
});

/**
 * snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (data class LineItem, newest).
 * Decoded only from `checkoutInfo.lineItems` (coupon redemption) and pricing; nothing is required, types must match.
 */
export const AndroidLineItem = z.object({
  id: z.string().nullish(),
  amount: Int.nullish(),
  couponID: z.string().nullish(),
  discountID: z.string().nullish(),
  discountRuleID: z.string().nullish(),
  discountType: z.string().nullish(),
  listPrice: Int.nullish(),
  name: z.string().nullish(),
  price: Int.nullish(),
  priceModifiers: z.array(z.object({ name: z.string().nullish(), price: Int.nullish() })).nullish(),
  redeemed: z.boolean().nullish(),
  refersTo: z.string().nullish(),
  referenceUnit: z.string().nullish(),
  scannedCode: z.string().nullish(),
  sku: z.string().nullish(),
  totalPrice: Int.nullish(),
  type: z.string().nullish(),
  units: Int.nullish(),
  weight: Int.nullish(),
  weightUnit: z.string().nullish(),
});

/** Line item as both SDKs need it (iOS is stricter in every field). */
export const LineItem = IosLineItem;

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutInfo.Price): both Int REQUIRED.
export const IosPrice = z.object({ price: Int, netPrice: Int });

// snabble/snabble-ios-sdk Core/Sources/Payment/PaymentMethods.swift (struct PaymentMethodDescription):
// element of checkoutInfo.paymentMethods; must match to be KEPT (failable element).
export const IosPaymentMethodDescription = z.object({
  id: IosRawPaymentMethod,
  acceptedOriginTypes: z.array(IosAcceptedOriginType).nullish(),
});

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct RequiredInformation)
export const IosRequiredInformation = z.object({
  id: IosRequiredInformationId,
  value: z.string().nullish(), // absent value = "please ask the user"
});

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutInfo.Violation)
export const IosViolation = z.object({
  type: z.string(), // fallback unknown
  refersTo: z.string().nullish(),
  message: z.string(),
  refersToItems: z.array(z.string()).nullish(),
});

function iosCheckoutInfo<P extends z.ZodType>(paymentMethodElement: P) {
  return z.object({
    session: z.string(),
    paymentMethods: z.array(paymentMethodElement),
    lineItems: z.array(IosLineItem),
    price: IosPrice,
    requiredInformation: z.array(IosRequiredInformation).nullish(),
    violations: z.array(IosViolation).nullish(),
  });
}

/**
 * snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutInfo, custom init(from:)).
 * REQUIRED: session, paymentMethods (array; NOT the documented `availableMethods`!), lineItems, price{price,netPrice}.
 */
export const IosCheckoutInfo = iosCheckoutInfo(z.unknown());
/** Same, but every payment method must survive decoding (otherwise it silently disappears from the app). */
export const IosCheckoutInfoKept = iosCheckoutInfo(IosPaymentMethodDescription);

/**
 * snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct SignedCheckoutInfo).
 * REQUIRED: checkoutInfo, signature (String), links.checkoutProcess.href (String).
 * The raw JSON object is kept and sent back verbatim-ish (JSONSerialization re-encoding) in the PUT.
 */
export const IosSignedCheckoutInfo = z.object({
  checkoutInfo: IosCheckoutInfo,
  signature: z.string(),
  links: z.object({ checkoutProcess: IosLink }),
});
export const IosSignedCheckoutInfoKept = IosSignedCheckoutInfo.extend({ checkoutInfo: IosCheckoutInfoKept });

// snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (data class PaymentMethodInfo)
export const AndroidPaymentMethodInfo = z.object({
  id: z.string().nullish(), // unknown ids are filtered out by PaymentMethod.fromString
  isTesting: z.boolean().nullish(),
  acceptedOriginTypes: z.array(z.string()).optional(), // never null (Kotlin non-null List)
});

/**
 * snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (data class SignedCheckoutInfo)
 * + DefaultCheckoutApi.kt createCheckoutInfo. `checkoutInfo` is kept as a raw JsonObject; the SDK reads
 * `checkoutInfo.price.price` (`asInt`, falls back to the local cart total if absent),
 * `checkoutInfo.paymentMethods` (newest: empty list => onSuccess with no methods; older: connection error),
 * `checkoutInfo.requiredInformation[].id/value` (taxation asked when id=="taxation" and no `value` key),
 * `checkoutInfo.lineItems` (coupon redemption). Flow-required: links.checkoutProcess.href (else onError).
 */
export const AndroidSignedCheckoutInfo = z.object({
  checkoutInfo: z.object({
    price: z.object({ price: z.union([Int, z.string()]).nullish() }).nullish(),
    paymentMethods: z.array(AndroidPaymentMethodInfo).nullish(),
    lineItems: z.array(AndroidLineItem).nullish(),
    requiredInformation: z.array(z.object({ id: z.string(), value: z.string().optional() })).nullish(),
    violations: z.array(z.object({ type: z.string().nullish(), refersTo: z.string().nullish(), message: z.string().nullish() })).optional(),
  }),
  signature: z.string().nullish(),
  links: z.object({ checkoutProcess: z.object({ href: z.string() }) }),
});

/** What both SDKs need from POST {checkoutInfo link} (iOS binding; extra fields allowed). */
export const SignedCheckoutInfo = IosSignedCheckoutInfoKept;
export const CheckoutInfo = IosCheckoutInfoKept;

// ---------------------------------------------------------------------------------------------
// Checkout process
// ---------------------------------------------------------------------------------------------

/**
 * snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutProcess+Checks.swift (struct CheckoutProcess.Check, newest):
 * element of `checks` (failable). id + state required; state unknown => FAILED.
 */
export const IosCheck = z.object({ id: z.string(), state: IosCheckState });

/** Older iOS Check (CheckoutProcess+Check.swift 2021): id, state, type required (fallback unknown), method optional. */
export const IosCheckV2021 = z.object({
  id: z.string(),
  state: z.string(),
  type: z.string(),
  method: z.string().nullish(),
});

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct Fulfillment.FulfillmentError)
export const IosFulfillmentError = z.object({
  type: z.string(),
  refersTo: z.string().nullish(),
  message: z.string(), // REQUIRED on iOS (spec says optional) — missing => the fulfillment is dropped
});

/**
 * snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct Fulfillment): element of
 * `fulfillments` (failable; elements with unknown state are filtered out too).
 */
export const IosFulfillment = z.object({
  id: z.string(),
  refersTo: z.array(z.string()),
  type: z.string(),
  state: FulfillmentState,
  errors: z.array(IosFulfillmentError).nullish(),
});

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutProcess.ProcessLinks)
export const IosProcessLinks = z.object({
  self: IosLink,
  approval: IosLink,
  receipt: IosLink.nullish(),
  authorizePayment: IosLink.nullish(),
});

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutProcess.PaymentInformation)
export const IosPaymentInformation = z.object({
  qrCodeContent: z.string().nullish(),
  handoverInformation: z.string().nullish(),
});

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct ExitToken)
export const IosExitToken = z.object({ format: z.string().nullish(), value: z.string().nullish() });

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutProcess.PaymentPreauthInformation)
export const IosPaymentPreauthInformation = z.object({
  merchantID: z.string().nullish(),
  markup: z.string().nullish(),
  mandateIdentification: z.string().nullish(),
});

// snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutProcess.VoucherInformation)
export const IosVoucherInformation = z.object({ refersTo: z.string(), state: IosVoucherState });

function iosCheckoutProcess<C extends z.ZodType, F extends z.ZodType>(check: C, fulfillment: F) {
  return z.object({
    id: z.string(),
    links: IosProcessLinks,
    aborted: z.boolean(),
    paymentMethod: z.string(),
    modified: z.boolean(),
    paymentInformation: IosPaymentInformation.nullish(),
    paymentState: z.string(), // fallback unknown; see PaymentStateKnown
    orderID: z.string().nullish(),
    paymentResult: z.record(z.string(), z.unknown()).nullish(), // must be an OBJECT if present
    pricing: z.object({ lineItems: z.array(IosLineItem), price: IosPrice }),
    checks: z.array(check).nullish(),
    fulfillments: z.array(fulfillment).nullish(),
    exitToken: IosExitToken.nullish(),
    currency: z.string(),
    paymentPreauthInformation: IosPaymentPreauthInformation.nullish(),
    routingTarget: z.string(), // REQUIRED key; unknown value => none
    depositReturnVouchers: z.array(IosVoucherInformation).nullish(),
  });
}

/**
 * snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift (struct CheckoutProcess, custom init(from:)).
 * REQUIRED: id, links.self, links.approval, aborted, paymentMethod, modified, paymentState, pricing
 * (lineItems + price{price, netPrice}), currency, routingTarget. Used for PUT/GET/PATCH(abort) answers.
 */
export const IosCheckoutProcess = iosCheckoutProcess(z.unknown(), z.unknown());
/** Same, but every check / fulfillment must survive decoding (newest Check shape). */
export const IosCheckoutProcessKept = iosCheckoutProcess(IosCheck, IosFulfillment);

// snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (data class Check)
export const AndroidCheck = z.object({
  id: z.string().nullish(),
  links: z.record(z.string(), AndroidHref).nullish(),
  type: z.string().nullish(), // min_age | supervisor_approval
  requiredAge: Int.nullish(),
  performedBy: z.string().nullish(), // app | supervisor | backend | payment
  state: z.string().nullish(), // AndroidCheckStateKnown; unknown => null
});

// snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (data class Fulfillment)
export const AndroidFulfillment = z.object({
  id: z.string().nullish(),
  type: z.string().nullish(),
  state: z.string().nullish(),
  refersTo: z.array(z.string()).optional(), // never null
  links: z.record(z.string(), AndroidHref).nullish(),
});

// snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (data class PaymentInformation): all Strings
export const AndroidPaymentInformation = z.object({
  qrCodeContent: z.string().nullish(),
  encryptedOrigin: z.string().nullish(),
  originType: z.string().nullish(),
  validUntil: z.string().nullish(),
  cardNumber: z.string().nullish(),
  deviceID: z.string().nullish(),
  deviceName: z.string().nullish(),
  deviceFingerprint: z.string().nullish(),
  deviceIPAddress: z.string().nullish(),
  handoverInformation: z.string().nullish(),
  subject: z.string().nullish(),
});

/**
 * snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (data class CheckoutProcessResponse).
 * Nothing required for decoding; `checks`/`fulfillments` must never be JSON null (NPE in Checkout.kt);
 * `links.self.href` is flow-required (polling, abort, and the checkout id = last path segment of it).
 */
export const AndroidCheckoutProcess = z.object({
  links: z.object({ self: z.object({ href: z.string() }) }).catchall(AndroidHref),
  checks: z.array(AndroidCheck).optional(),
  orderID: z.string().nullish(),
  depositReturnVouchers: z.array(z.object({ refersTo: z.string(), state: z.string() })).nullish(),
  aborted: z.boolean().nullish(),
  paymentMethod: z.string().nullish(),
  paymentInformation: AndroidPaymentInformation.nullish(),
  paymentPreauthInformation: z.record(z.string(), z.unknown()).nullish(),
  exitToken: z.object({ value: z.string().nullish(), format: z.string().nullish() }).nullish(),
  paymentState: z.string().nullish(),
  pricing: z.object({ price: z.object({ price: Int.nullish(), netPrice: Int.nullish() }).nullish() }).nullish(),
  routingTarget: z.string().nullish(),
  paymentResult: z.object({ originCandidateLink: z.string().nullish(), failureCause: z.string().nullish() }).nullish(),
  fulfillments: z.array(AndroidFulfillment).optional(),
});

/** What both SDKs need from a checkout process answer. */
export const CheckoutProcess = IosCheckoutProcessKept;

// ---------------------------------------------------------------------------------------------
// Error envelope
// ---------------------------------------------------------------------------------------------

export interface IosErrorResponseT {
  type: string;
  message?: string | null | undefined;
  sku?: string | null | undefined;
  id?: string | null | undefined;
  details?: IosErrorResponseT[] | null | undefined;
}

/**
 * snabble/snabble-ios-sdk Core/Sources/API/Project+Network.swift (struct ErrorResponse): `type` REQUIRED
 * (also in every element of `details`), the rest optional. Only parsed if the response Content-Type
 * starts with `application/json`; otherwise (or if it fails) the app only sees the status code.
 */
export const IosErrorResponse: z.ZodType<IosErrorResponseT> = z.lazy(() =>
  z.object({
    type: z.string(),
    message: z.string().nullish(),
    sku: z.string().nullish(),
    id: z.string().nullish(),
    details: z.array(IosErrorResponse).nullish(),
  }),
);

// snabble/snabble-ios-sdk Core/Sources/API/Project+Network.swift (struct SnabbleAPIError): wrapped form ONLY.
export const IosApiError = z.object({ error: IosErrorResponse });

/**
 * snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/DefaultCheckoutApi.kt (createCheckoutInfo failure):
 * reads `error.type`; for invalid_cart_item reads `error.details[].sku` (String; blank ignored) and, when no
 * cart product matches, `error.details[].id`. A top-level `{type, …}` body throws inside `failure`, which
 * JsonCallback.handleFailure catches => reported as a CONNECTION error instead of the real reason.
 */
export const AndroidApiError = z.object({
  error: z.object({
    type: z.string(),
    message: z.string().nullish(),
    details: z.array(z.object({ sku: z.string(), id: z.string().optional(), type: z.string().optional() })).nullish(),
  }),
});

/** The envelope both SDKs understand: `{error: {type, message?, details?: [{type, sku, id?, message?}]}}`. */
export const ApiErrorEnvelope = z.object({
  error: z.object({
    type: z.string(),
    message: z.string().nullish(),
    details: z
      .array(z.object({ type: z.string(), sku: z.string(), id: z.string().nullish(), message: z.string().nullish() }))
      .nullish(),
  }),
});

// ---------------------------------------------------------------------------------------------
// Coupons (app-facing coupon list: project metadata `coupons`, links.coupons => {coupons: [...]})
// ---------------------------------------------------------------------------------------------

// snabble/snabble-ios-sdk Core/Sources/Coupons/Coupon.swift (struct Colors): both REQUIRED if colors present
export const IosCouponColors = z.object({ background: z.string(), foreground: z.string() });

// snabble/snabble-ios-sdk Core/Sources/Coupons/Coupon.swift (struct Format): url must be a valid URL string
export const IosCouponImageFormat = z.object({
  size: z.string(),
  url: z.url(),
  width: Int.nullish(),
  height: Int.nullish(),
  contentType: z.string(),
});

// snabble/snabble-ios-sdk Core/Sources/Coupons/Coupon.swift (struct Image)
export const IosCouponImage = z.object({ formats: z.array(IosCouponImageFormat), name: z.string().nullish() });

/**
 * snabble/snabble-ios-sdk Core/Sources/Coupons/Coupon.swift (struct Coupon, synthesized Codable).
 * REQUIRED: id, name, type (String, fallback unknown), projectID (String).
 * Failure mode: coupons embedded in project metadata are decoded WITHOUT `try?` (Project.swift) — one
 * bad coupon fails the entire project metadata. Digital coupons without a usable image are hidden
 * (CouponManager.swift filters `imageURL != nil` and `type != unknown`).
 */
export const IosCoupon = z.object({
  id: z.string(),
  externalID: z.string().nullish(),
  name: z.string(),
  type: z.string(),
  code: z.string().nullish(),
  codes: z.array(z.object({ code: z.string(), template: z.string() })).nullish(),
  projectID: z.string(),
  colors: IosCouponColors.nullish(),
  description: z.string().nullish(),
  promotionDescription: z.string().nullish(),
  disclaimer: z.string().nullish(),
  image: IosCouponImage.nullish(),
  validFrom: IosDate.nullish(),
  validUntil: IosDate.nullish(),
  percentage: Int.nullish(),
});

// snabble/snabble-ios-sdk Core/Sources/Coupons/Coupon.swift (struct CouponList)
export const IosCouponList = z.object({ coupons: z.array(IosCoupon) });

/**
 * snabble/Android-SDK core/src/main/java/io/snabble/sdk/coupons/Coupon.kt (data class Coupon, Gson without
 * all-default constructor => absent non-null fields become null). Needed in practice: id, name (String),
 * type in {manual, printed, digital} (else crash, see AndroidCouponType); digital coupons need `image`
 * with a non-empty `formats` (bestResolutionUrl falls back to `formats.last()`); validFrom/validUntil
 * must be zoned ISO dates (ZonedDateTime.parse) when read.
 */
export const AndroidCoupon = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullish(),
  promotionDescription: z.string().nullish(),
  type: AndroidCouponType,
  codes: z.array(z.object({ code: z.string(), template: z.string() })).nullish(),
  code: z.string().nullish(),
  validFrom: AndroidZonedDate.nullish(),
  validUntil: AndroidZonedDate.nullish(),
  image: z
    .object({
      name: z.string().nullish(),
      formats: z
        .array(z.object({ contentType: z.string(), width: Int.nullish(), height: Int.nullish(), size: z.string(), url: z.string() }))
        .min(1),
    })
    .nullish(),
  disclaimer: z.string().nullish(),
  colors: z.record(z.string(), z.string()).nullish(), // keys background / foreground
});

// snabble/Android-SDK core/src/main/java/io/snabble/sdk/coupons/Coupons.kt (private data class CouponResponse)
export const AndroidCouponList = z.object({ coupons: z.array(AndroidCoupon) });

/** What both SDKs need of one coupon. */
export const Coupon = IosCoupon.extend({ type: AndroidCouponType });
export const CouponList = z.object({ coupons: z.array(Coupon) });

// ---------------------------------------------------------------------------------------------
// App user's order list (purchase history): metadata links appUserOrders `/apps/users/{appUserID}/orders`,
// clientOrders `/clients/{clientID}/orders`
// ---------------------------------------------------------------------------------------------

/**
 * snabble/snabble-ios-sdk Core/Sources/Orders/OrderList.swift (struct Order). ALL REQUIRED except
 * links.receipt: project, id, date (IosDate), shopID (String! not Int), shopName, price (Int), links (object).
 * Orders whose receipt href is empty are hidden from `receipts`.
 */
export const IosOrder = z.object({
  project: z.string(),
  id: z.string(),
  date: IosDate,
  shopID: z.string(),
  shopName: z.string(),
  price: Int,
  links: z.object({ receipt: IosLink.nullish() }),
});

// snabble/snabble-ios-sdk Core/Sources/Orders/OrderList.swift (struct OrderList)
export const IosOrderList = z.object({ orders: z.array(IosOrder) });

/**
 * snabble/Android-SDK core/src/main/java/io/snabble/sdk/ReceiptsApi.java (ApiReceipt / ApiOrder, Gson).
 * `orders` must be an array and every order's `links` an object (NullPointerException otherwise);
 * orders without links.receipt are skipped; `date` must match AndroidOrderDate or the order is skipped;
 * orders of unknown projects are skipped.
 */
export const AndroidOrder = z.object({
  id: z.string().nullish(),
  project: z.string(),
  date: AndroidOrderDate,
  shopID: z.union([z.string(), z.number()]).nullish(),
  shopName: z.string().nullish(),
  price: z.union([Int, z.string()]),
  links: z.object({ receipt: AndroidHref.optional() }).catchall(AndroidHref),
});
export const AndroidOrderList = z.object({ orders: z.array(AndroidOrder) });

/** What both SDKs need of the purchase list. */
export const OrderList = z.object({
  orders: z.array(IosOrder.extend({ date: AndroidOrderDate })),
});

// ---------------------------------------------------------------------------------------------
// Sign-in: the metadata document (GET /metadata/app/{appID}/{platform}/{version}), app users and
// tokens (POST links.createAppUser?project=, GET project links.tokens?role=retailerApp)
// ---------------------------------------------------------------------------------------------

/**
 * snabble/Android-SDK core/src/main/java/io/snabble/sdk/Project.kt (`parse`): a project's `links`
 * are read entry by entry as `value.asJsonObject["href"].asString`, so EVERY entry must be an object
 * with a string href (anything else throws past `parseProjects`, which catches only
 * IllegalArgumentException); `tokens` is made `"${urls["tokens"]}?role=retailerApp"`, so it must
 * carry no query. `id` is required (requireNotNull: the project is dropped). `customerCards` is read
 * with `getAsJsonObject` and used without a null check: a missing object is a NullPointerException
 * (Kotlin's receiver check) that loses the project. `currency` goes to Currency.getInstance (an ISO
 * 4217 code), `roundingMode` `up`/`down`/else half up, `locale` to LocaleUtils.toLocale.
 */
export const AndroidMetadataProject = z.object({
  id: z.string(),
  name: z.string().nullish(),
  links: z.record(z.string(), z.object({ href: z.string() })).refine((links) => links.tokens !== undefined && !links.tokens.href.includes('?'), 'links.tokens without a query'),
  customerCards: z.object({ accepted: z.array(z.string()).nullish(), required: z.string().nullish() }),
  currency: z.string().regex(/^[A-Z]{3}$/).nullish(),
  decimalDigits: Int.nullish(),
  locale: z.string().nullish(),
  roundingMode: z.string().nullish(),
  enableCheckout: z.boolean().nullish(),
  shops: z.array(AndroidShop).nullish(),
});

/**
 * snabble/Android-SDK core/src/main/java/io/snabble/sdk/Snabble.kt (`readMetadata`, `getUrl`): the
 * global links are optional one by one (a missing one turns its feature off), but without
 * `createAppUser` no app user, hence no token, can be had; it becomes `"${createAppUser}?project=<id>"`
 * (Project.kt), so it carries no query either. `metadata.kill` (getBooleanOpt, default false).
 */
export const AndroidMetadata = z.object({
  links: z.object({
    createAppUser: z.object({ href: z.string().refine((href) => !href.includes('?'), 'no query') }),
    appUser: z.object({ href: z.string() }).nullish(),
    appUserOrders: z.object({ href: z.string() }).nullish(),
    consents: z.object({ href: z.string() }).nullish(),
  }),
  metadata: z.object({ kill: z.boolean().nullish() }).nullish(),
  projects: z.array(AndroidMetadataProject).min(1),
});

/** snabble/snabble-ios-sdk Core/Sources/Metadata/Project.swift (ProjectLinks): appdb, appEvents, checkoutInfo, tokens REQUIRED; `rawLinks` decodes every entry as a Link. */
export const IosProjectLinks = z.object({ appdb: IosLink, appEvents: IosLink, checkoutInfo: IosLink, tokens: IosLink }).catchall(IosLink);

/**
 * snabble/snabble-ios-sdk Core/Sources/Metadata/Project.swift (Project): id, name, links, currency,
 * decimalDigits (Int), locale, roundingMode REQUIRED (roundingMode `up`, `down`, `commercial`; an
 * unknown value is `up`); customerCards optional; shops decoded with `try?` (a bad list is none);
 * coupons decoded WITHOUT `try?` when present.
 */
export const IosMetadataProject = z.object({
  id: z.string(),
  name: z.string(),
  links: IosProjectLinks,
  currency: z.string(),
  decimalDigits: Int,
  locale: z.string(),
  roundingMode: z.string(),
  customerCards: z.object({ required: z.string().nullish(), accepted: z.array(z.string()).nullish() }).nullish(),
  shops: z.unknown(),
  coupons: z.array(IosCoupon).nullish(),
});

/**
 * snabble/snabble-ios-sdk Core/Sources/Metadata/Metadata.swift (Metadata, MetadataLinks, Flags):
 * `metadata.kill` (Bool), `projects`, `links.appUser`, `appUserOrders`, `createAppUser`, `self`
 * REQUIRED; `consents`, `clientOrders` optional; `gatewayCertificates` optional.
 */
export const IosMetadata = z.object({
  metadata: z.object({ kill: z.boolean() }),
  projects: z.array(IosMetadataProject),
  links: z.object({ appUser: IosLink, appUserOrders: IosLink, createAppUser: IosLink, self: IosLink, consents: IosLink.nullish(), clientOrders: IosLink.nullish() }),
  gatewayCertificates: z.array(z.object({ value: z.string(), validUntil: z.string() })).nullish(),
});

/** What both SDKs need of the metadata document. */
export const AppMetadata = IosMetadata.and(AndroidMetadata);

/**
 * The token of a project: snabble/Android-SDK core/src/main/java/io/snabble/sdk/auth/Token.java (Gson:
 * `id`, `token`, `issuedAt`, `expiresAt` as long Unix seconds; TokenRegistry asks again once half of
 * expiresAt - issuedAt has passed), snabble/snabble-ios-sdk Core/Sources/API/TokenRegistry.swift
 * (TokenResponse: all REQUIRED, Int64) and Network/Sources/Models/Token.swift (`token` as `value`,
 * dates from seconds).
 */
export const AppToken = z.object({ id: z.string(), token: z.string(), issuedAt: Int, expiresAt: Int });

/**
 * A new app user and its first token: snabble/Android-SDK auth/AppUserAndToken.java and
 * AppUser.java (Gson), snabble/snabble-ios-sdk Core/Sources/API/TokenRegistry.swift
 * (AppUserResponse: appUser.id, appUser.secret, token all REQUIRED). The SDKs join id and secret
 * into Basic credentials with `:`, so neither may hold one.
 */
export const AppUserAndToken = z.object({
  appUser: z.object({ id: z.string().regex(/^[^:]+$/), secret: z.string().regex(/^[^:]+$/) }),
  token: AppToken,
});

/** snabble/snabble-ios-sdk Core/Sources/API/Snabble.swift (AppUserData): id REQUIRED; Android Users.kt (Response) reads the same. */
export const AppUserData = z.object({ id: z.string(), dayOfBirth: z.string().nullish(), bornBeforeOrOn: z.string().nullish() });

// ---------------------------------------------------------------------------------------------
// What the SDKs SEND (the platform must accept these)
// ---------------------------------------------------------------------------------------------

/** Product item: iOS Cart.ProductItem (CheckoutData.swift) / Android BackendCartItem (BackendCartItem.kt). */
export const SentProductItem = z.object({
  id: z.string(),
  sku: z.string(),
  amount: Int,
  scannedCode: z.string().optional(), // iOS always; Android may omit if unknown
  price: Int.optional(),
  weight: Int.optional(),
  units: Int.optional(),
  weightUnit: z.string().optional(), // a unit id incl. "piece" and "price"
});

/** Coupon item: iOS Cart.CouponItem / Android BackendCartItem with couponID. */
export const SentCouponItem = z.object({
  id: z.string(),
  couponID: z.string(),
  refersTo: z.string().optional(),
  scannedCode: z.string().optional(),
  amount: Int,
});

/** Deposit return voucher: iOS Cart.VoucherItem uses `itemID`; newest Android uses `ItemID`; older Android `itemId`. */
export const SentVoucherItem = z.object({
  id: z.string(),
  type: z.literal('depositReturnVoucher'),
  itemID: z.string().optional(),
  ItemID: z.string().optional(),
  itemId: z.string().optional(),
  scannedCode: z.string(),
  amount: Int,
});

/** Cart body POSTed to links.checkoutInfo by both SDKs (iOS Cart in CheckoutData.swift, Android BackendCart.kt). */
export const SentCart = z.object({
  session: z.string(),
  shopID: z.string(),
  clientID: z.string(),
  appUserID: z.string().optional(),
  customer: z.object({ loyaltyCard: z.string() }).optional(),
  items: z.array(z.union([SentVoucherItem, SentCouponItem, SentProductItem])),
  requiredInformation: z.array(z.object({ id: z.string(), value: z.string() })),
  eventType: z.literal('cart').optional(), // Android only (BackendCart implements the event Payload)
});

/** Body PUT to `${links.checkoutProcess.href}/${uuid}` (iOS CheckoutRequests.swift, Android DefaultCheckoutApi.kt). */
export const SentCreateCheckoutProcess = z.object({
  signedCheckoutInfo: z.object({ checkoutInfo: z.record(z.string(), z.unknown()), signature: z.string() }).loose(),
  paymentMethod: z.string(),
  paymentInformation: z.record(z.string(), z.string()).optional(),
  finalizedAt: z.string().optional(),
  processedOffline: z.boolean().optional(),
});

/** PATCH body to links.self (both SDKs). */
export const SentAbort = z.object({ aborted: z.literal(true) });

// ---------------------------------------------------------------------------------------------
// Sources
// ---------------------------------------------------------------------------------------------

const IOS = 'snabble/snabble-ios-sdk';
const AND = 'snabble/Android-SDK';

export const Sources: Record<string, string> = {
  IosLink: `${IOS} Core/Sources/Metadata/Link.swift (Link)`,
  AndroidHref: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (Href)`,
  IosDate: `${IOS} Core/Sources/API/Utilities.swift (JSONDecoder.DateDecodingStrategy.customISO8601)`,
  AndroidOrderDate: `${AND} core/src/main/java/io/snabble/sdk/ReceiptsApi.java (SimpleDateFormat yyyy-MM-dd'T'HH:mm:ss.SSS'Z')`,
  AndroidZonedDate: `${AND} core/src/main/java/io/snabble/sdk/coupons/Coupon.kt (ZonedDateTime.parse)`,
  IosUnits: `${IOS} Core/Sources/Products/Units.swift (Units)`,
  AndroidUnitsKnown: `${AND} core/src/main/java/io/snabble/sdk/Unit.java (Unit.fromString)`,
  IosLineItemTypeKnown: `${IOS} Core/Sources/Cart/CheckoutData.swift (LineItemType)`,
  AndroidLineItemTypeKnown: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (LineItemType)`,
  IosRawPaymentMethod: `${IOS} Core/Sources/Payment/PaymentMethods.swift (RawPaymentMethod)`,
  AndroidPaymentMethodKnown: `${AND} core/src/main/java/io/snabble/sdk/PaymentMethod.kt (PaymentMethod)`,
  IosAcceptedOriginType: `${IOS} Core/Sources/Cart/CheckoutData.swift (AcceptedOriginType)`,
  PaymentStateKnown: `${IOS} Core/Sources/Cart/CheckoutData.swift (PaymentState); ${AND} checkout/CheckoutApi.kt (CheckState)`,
  RoutingTargetKnown: `${IOS} Core/Sources/Cart/CheckoutData.swift (RoutingTarget); ${AND} checkout/CheckoutApi.kt (RoutingTarget)`,
  FulfillmentState: `${IOS} Core/Sources/Cart/CheckoutData.swift (FulfillmentState); ${AND} core/src/main/java/io/snabble/sdk/FulfillmentState.kt`,
  FulfillmentStateKnown: `${IOS} Core/Sources/Cart/CheckoutData.swift (FulfillmentState); ${AND} core/src/main/java/io/snabble/sdk/FulfillmentState.kt`,
  IosCheckState: `${IOS} Core/Sources/Cart/CheckoutProcess+Checks.swift (CheckoutProcess.Check.State)`,
  IosCheckTypeKnown: `${IOS} CheckoutProcess+Check.swift, 2021 version (Check.Type)`,
  IosCheckMethodKnown: `${IOS} CheckoutProcess+Check.swift, 2021 version (Check.Method)`,
  AndroidCheckStateKnown: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (CheckState)`,
  AndroidCheckTypeKnown: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (CheckType)`,
  AndroidPerformerKnown: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (Performer)`,
  IosViolationTypeKnown: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutInfo.Violation.Type)`,
  AndroidViolationTypeKnown: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (ViolationType)`,
  IosRequiredInformationId: `${IOS} Core/Sources/Cart/CheckoutData.swift (RequiredInformationType)`,
  TaxationValuesKnown: `${IOS} Core/Sources/Cart/CheckoutData.swift (RequiredInformation.TaxationValue); ${AND} core/src/main/java/io/snabble/sdk/shoppingcart/data/Taxation.kt`,
  IosVoucherState: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutProcess.VoucherInformation.VoucherState)`,
  IosCouponTypeKnown: `${IOS} Core/Sources/Coupons/Coupon.swift (CouponType)`,
  AndroidCouponType: `${AND} core/src/main/java/io/snabble/sdk/coupons/Coupon.kt (CouponType)`,
  IosErrorTypeKnown: `${IOS} Core/Sources/API/Project+Network.swift (ErrorResponseType)`,
  AndroidCheckoutInfoErrorTypeKnown: `${AND} core/src/main/java/io/snabble/sdk/checkout/DefaultCheckoutApi.kt (createCheckoutInfo failure)`,
  IosScanFormatKnown: `${IOS} Core/Sources/Metadata/Project.swift (ScanFormat)`,
  AndroidShopServiceKnown: `${AND} core/src/main/java/io/snabble/sdk/Shop.java (Shop.Service)`,
  IosOpeningHoursSpecification: `${IOS} Core/Sources/Metadata/Shop.swift (OpeningHoursSpecification)`,
  IosShopService: `${IOS} Core/Sources/Metadata/Shop.swift (ShopService)`,
  IosShop: `${IOS} Core/Sources/Metadata/Shop.swift (Shop)`,
  IosActiveShops: `${IOS} Core/Sources/Metadata/Shop.swift (ActiveShops)`,
  AndroidShop: `${AND} core/src/main/java/io/snabble/sdk/Shop.java (Shop)`,
  Shop: `${IOS} Core/Sources/Metadata/Shop.swift (Shop) — binding for both`,
  IosPriceModifier: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutInfo.LineItem.PriceModifier)`,
  IosLineItem: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutInfo.LineItem)`,
  AndroidLineItem: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (LineItem)`,
  LineItem: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutInfo.LineItem) — binding for both`,
  IosPrice: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutInfo.Price)`,
  IosPaymentMethodDescription: `${IOS} Core/Sources/Payment/PaymentMethods.swift (PaymentMethodDescription)`,
  IosRequiredInformation: `${IOS} Core/Sources/Cart/CheckoutData.swift (RequiredInformation)`,
  IosViolation: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutInfo.Violation)`,
  IosCheckoutInfo: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutInfo)`,
  IosCheckoutInfoKept: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutInfo, all payment methods kept)`,
  IosSignedCheckoutInfo: `${IOS} Core/Sources/Cart/CheckoutData.swift (SignedCheckoutInfo)`,
  IosSignedCheckoutInfoKept: `${IOS} Core/Sources/Cart/CheckoutData.swift (SignedCheckoutInfo, all payment methods kept)`,
  AndroidPaymentMethodInfo: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (PaymentMethodInfo)`,
  AndroidSignedCheckoutInfo: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (SignedCheckoutInfo) + DefaultCheckoutApi.kt`,
  SignedCheckoutInfo: `${IOS} CheckoutData.swift (SignedCheckoutInfo) — binding for both`,
  CheckoutInfo: `${IOS} CheckoutData.swift (CheckoutInfo) — binding for both`,
  IosCheck: `${IOS} Core/Sources/Cart/CheckoutProcess+Checks.swift (CheckoutProcess.Check)`,
  IosCheckV2021: `${IOS} CheckoutProcess+Check.swift, 2021 version (CheckoutProcess.Check)`,
  IosFulfillmentError: `${IOS} Core/Sources/Cart/CheckoutData.swift (Fulfillment.FulfillmentError)`,
  IosFulfillment: `${IOS} Core/Sources/Cart/CheckoutData.swift (Fulfillment)`,
  IosProcessLinks: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutProcess.ProcessLinks)`,
  IosPaymentInformation: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutProcess.PaymentInformation)`,
  IosExitToken: `${IOS} Core/Sources/Cart/CheckoutData.swift (ExitToken)`,
  IosPaymentPreauthInformation: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutProcess.PaymentPreauthInformation)`,
  IosVoucherInformation: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutProcess.VoucherInformation)`,
  IosCheckoutProcess: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutProcess)`,
  IosCheckoutProcessKept: `${IOS} Core/Sources/Cart/CheckoutData.swift (CheckoutProcess, all checks/fulfillments kept)`,
  AndroidCheck: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (Check)`,
  AndroidFulfillment: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (Fulfillment)`,
  AndroidPaymentInformation: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (PaymentInformation)`,
  AndroidCheckoutProcess: `${AND} core/src/main/java/io/snabble/sdk/checkout/CheckoutApi.kt (CheckoutProcessResponse) + Checkout.kt`,
  CheckoutProcess: `${IOS} CheckoutData.swift (CheckoutProcess) — binding for both`,
  IosErrorResponse: `${IOS} Core/Sources/API/Project+Network.swift (ErrorResponse)`,
  IosApiError: `${IOS} Core/Sources/API/Project+Network.swift (SnabbleAPIError)`,
  AndroidApiError: `${AND} core/src/main/java/io/snabble/sdk/checkout/DefaultCheckoutApi.kt (createCheckoutInfo failure) + utils/.../JsonCallback.java`,
  ApiErrorEnvelope: `${IOS} Project+Network.swift (SnabbleAPIError) ∩ ${AND} DefaultCheckoutApi.kt`,
  IosCouponColors: `${IOS} Core/Sources/Coupons/Coupon.swift (Colors)`,
  IosCouponImageFormat: `${IOS} Core/Sources/Coupons/Coupon.swift (Format)`,
  IosCouponImage: `${IOS} Core/Sources/Coupons/Coupon.swift (Image)`,
  IosCoupon: `${IOS} Core/Sources/Coupons/Coupon.swift (Coupon)`,
  IosCouponList: `${IOS} Core/Sources/Coupons/Coupon.swift (CouponList)`,
  AndroidCoupon: `${AND} core/src/main/java/io/snabble/sdk/coupons/Coupon.kt (Coupon)`,
  AndroidCouponList: `${AND} core/src/main/java/io/snabble/sdk/coupons/Coupons.kt (CouponResponse)`,
  Coupon: `${IOS} Coupon.swift (Coupon) ∩ ${AND} coupons/Coupon.kt (Coupon)`,
  CouponList: `${IOS} Coupon.swift (CouponList) ∩ ${AND} coupons/Coupons.kt (CouponResponse)`,
  IosOrder: `${IOS} Core/Sources/Orders/OrderList.swift (Order)`,
  IosOrderList: `${IOS} Core/Sources/Orders/OrderList.swift (OrderList)`,
  AndroidOrder: `${AND} core/src/main/java/io/snabble/sdk/ReceiptsApi.java (ApiOrder)`,
  AndroidOrderList: `${AND} core/src/main/java/io/snabble/sdk/ReceiptsApi.java (ApiReceipt)`,
  OrderList: `${IOS} OrderList.swift (OrderList) ∩ ${AND} ReceiptsApi.java (ApiReceipt)`,
  SentProductItem: `${IOS} Core/Sources/Cart/CheckoutData.swift (Cart.ProductItem) + CartData.swift (CartItem.cartItems); ${AND} shoppingcart/data/item/BackendCartItem.kt`,
  SentCouponItem: `${IOS} Core/Sources/Cart/CheckoutData.swift (Cart.CouponItem); ${AND} shoppingcart/ShoppingCart.kt (createBackendCartItems)`,
  SentVoucherItem: `${IOS} Core/Sources/Cart/CheckoutData.swift (Cart.VoucherItem); ${AND} shoppingcart/data/item/BackendCartItem.kt (ItemID)`,
  SentCart: `${IOS} Core/Sources/Cart/CheckoutData.swift (Cart); ${AND} core/src/main/java/io/snabble/sdk/shoppingcart/data/cart/BackendCart.kt`,
  SentCreateCheckoutProcess: `${IOS} Core/Sources/Cart/CheckoutRequests.swift (createCheckoutProcess); ${AND} checkout/CheckoutApi.kt (CheckoutProcessRequest)`,
  SentAbort: `${IOS} Core/Sources/Cart/CheckoutData.swift (AbortRequest); ${AND} checkout/DefaultCheckoutApi.kt (abort)`,
  AndroidMetadataProject: `${AND} core/src/main/java/io/snabble/sdk/Project.kt (parse)`,
  AndroidMetadata: `${AND} core/src/main/java/io/snabble/sdk/Snabble.kt (readMetadata, getUrl)`,
  IosProjectLinks: `${IOS} Core/Sources/Metadata/Project.swift (ProjectLinks)`,
  IosMetadataProject: `${IOS} Core/Sources/Metadata/Project.swift (Project)`,
  IosMetadata: `${IOS} Core/Sources/Metadata/Metadata.swift (Metadata)`,
  AppMetadata: `${IOS} Metadata.swift (Metadata) ∩ ${AND} Snabble.kt (readMetadata) + Project.kt (parse)`,
  AppToken: `${AND} core/src/main/java/io/snabble/sdk/auth/Token.java; ${IOS} Core/Sources/API/TokenRegistry.swift (TokenResponse)`,
  AppUserAndToken: `${AND} core/src/main/java/io/snabble/sdk/auth/AppUserAndToken.java; ${IOS} Core/Sources/API/TokenRegistry.swift (AppUserResponse)`,
  AppUserData: `${IOS} Core/Sources/API/Snabble.swift (AppUserData); ${AND} core/src/main/java/io/snabble/sdk/Users.kt (Response)`,
};
