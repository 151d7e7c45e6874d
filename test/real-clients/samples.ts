/**
 * (a) Samples as documented in the public snabble docs (repository snabble/docs) and SDK test fixtures,
 * kept as the docs show them: field names, value types and odd values are preserved. Where the docs'
 * JSON is syntactically broken (missing commas, `// …` comments, `..` placeholders, unterminated
 * strings) the smallest repair was made and is noted in the comment; `{ .. checkoutInfo .. }`
 * placeholders are replaced by a marker string.
 *
 * (b) Request shapes the real SDKs send (snabble/snabble-ios-sdk, snabble/Android-SDK), with realistic
 * example values built from reading their encoders.
 *
 * NOT in the stored snabble/docs repository (so no documented samples exist here for them):
 * availabilities, v2 category pricing, closings, closing schedules, retailer coupons, promotion
 * configurations, fulfillment-service calls, product search. The app-facing coupon list shape is
 * given from the SDK decoders instead (SdkCouponList).
 */

// =================================================================================================
// (a) DOCUMENTED SAMPLES
// =================================================================================================

// ---------------------------------------------------------------------------------------------
// Shops
// ---------------------------------------------------------------------------------------------

/**
 * snabble/docs api_shops.md — "Shop" example. Notes: NO `id` field (iOS Shop requires it), email
 * "email1" is not an e-mail address, services ["backery"] (typo; Android Shop.Service knows "bakery"),
 * `links.self.href` is an absolute http URL on localhost, zip "postalCode". The docs' array contains a
 * literal `...` after the second opening-hours entry (removed here).
 */
export const DocsShop = {
  project: 'some-project',
  externalId: 'some-id',
  name: 'name',
  lat: 1.0,
  lon: 1.0,
  openingHoursSpecification: [
    { opens: '08:00', closes: '12:00', dayOfWeek: 'MONDAY' },
    { opens: '14:00', closes: '20:00', dayOfWeek: 'MONDAY' },
  ],
  phone: '111',
  email: 'email1',
  services: ['backery'],
  state: 'region',
  street: 'street 1',
  city: 'city',
  zip: 'postalCode',
  country: 'country',
  links: {
    self: { href: 'http://localhost:8080/api/1/shops/city-street-1-epvxvKgNP8' },
  },
};

/**
 * snabble/Android-SDK core/src/test/resources/metadata.json — shop list entries as the app receives
 * them inside project metadata (`projects[].shops`). Notes: ids are numeric STRINGS, `external` and
 * `externalId` are null, lat/lon can be integers, opening hours are "HH:MM:SS" with Title-case
 * weekdays ("Tuesday"), country with a trailing space, last entry has countryCode "deu",
 * customerNetworks [], email "", state "", and an extra `visible` flag.
 */
export const SdkFixtureMetadataShops = [
  {
    city: 'Some City',
    country: 'Deutschland ',
    email: 'info@snabble.io',
    external: null,
    externalId: null,
    id: '2311',
    lat: 2,
    links: { self: { href: 'https://api.snabble-testing.io/test/shops/2311' } },
    lon: 2,
    name: 'snabble Shop 2',
    openingHoursSpecification: [
      { closes: '13:00:00', dayOfWeek: 'Tuesday', opens: '12:00:00' },
      { closes: '23:48:00', dayOfWeek: 'Monday', opens: '12:48:00' },
    ],
    phone: '12345',
    project: 'test',
    services: ['parking', 'bakery'],
    state: 'NRW',
    street: 'Some Street',
    zip: '12345',
  },
  {
    city: 'Gold City',
    country: 'Germany',
    countryCode: 'deu',
    customerNetworks: [],
    email: '',
    external: null,
    externalId: null,
    id: '7856',
    lat: 1,
    links: { self: { href: 'https://api.snabble-testing.io/test-ieme8a/shops/7856' } },
    lon: 1,
    name: 'Expensive Shop',
    openingHoursSpecification: [],
    phone: '53478278882',
    project: 'test-ieme8a',
    services: [],
    state: '',
    street: 'Rich Street',
    visible: true,
    zip: '45324',
  },
];

/**
 * snabble/Android-SDK core/src/test/resources/metadata.json — top-level app metadata links the SDKs use
 * for the purchase list (iOS OrderList.swift replaces {appUserID} / {clientID}).
 */
export const SdkFixtureMetadataLinks = {
  appUser: { href: '/apps/users/{appUserID}' },
  appUserOrders: { href: '/apps/users/{appUserID}/orders' },
  clientOrders: { href: '/clients/{clientID}/orders' },
  createAppUser: { href: '/apps/test/users' },
  self: { href: '/metadata/app/test-app/version/1.0' },
};

// ---------------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------------

/** snabble/docs api_products.md (newest stored version) — "Product Object v2" example. */
export const DocsProductV2 = {
  sku: '1120325205',
  project: 'project',
  name: 'Premium-Holzöl',
  description: 'farblos, 750ml',
  subtitle: 'Aplina',
  taxCategory: 'normal',
  imageUrl: 'https://www.example.com/some/image.jpg',
  productType: 'default',
  controlIndication: 0.4,
  saleRestriction: 'min_age_18',
  saleStop: true,
  scanMessage: 'multipack-2',
  codes: [{ code: '0654203316514', transmissionCode: '1234203316514', template: 'default' }],
};

/**
 * snabble/docs api_products.md — deprecated "Product Object v1" example (prices inside the product).
 * Docs JSON repaired: missing comma after `codes` and a trailing comma after `basePrice`.
 * Note productType values documented: "default", "weighable", "deposit" (not productSet/variantBase).
 */
export const DocsProductV1 = {
  sku: '1120325205',
  name: 'Premium-Holzöl',
  description: 'farblos, 750ml',
  subtitle: 'Aplina',
  taxCategory: 'normal',
  depositProduct: null,
  outOfStock: false,
  deleted: false,
  imageUrl: 'https://www.example.com/some/image.jpg',
  productType: 'default',
  controlIndication: 0.4,
  forceControl: false,
  saleRestriction: 'min_age_18',
  saleStop: true,
  eans: ['0654203316514'],
  codes: [{ code: '0654203316514', transmissionCode: '1234203316514' }],
  price: 1699,
  discountedPrice: 1499,
  basePrice: '19,99 EUR / 1 Liter',
};

/**
 * snabble/docs api_products.md — "Weighing" example (deprecated v1 `weighing` object) for a bag of
 * apples, 3.90/kg, 720 g, EAN 2323230007204. encodingUnit "g", referenceUnit "kg".
 */
export const DocsWeighing = {
  weighedItemIds: ['2323230000000', '2727270000000'],
  pluSet: ['4128'],
  weighByCustomer: true,
  referenceUnit: 'kg',
  encodingUnit: 'g',
};

/**
 * A weighable v2 product assembled ONLY from documented v2 fields (api_products.md table: weighByCustomer,
 * referenceUnit, encodingUnit, pluSet, codes[].template) and the docs' template/units lists — there is
 * no v2 weighable example in the docs. Template "ean13_instore" is a documented template id.
 */
export const DocsDerivedWeighableProductV2 = {
  sku: '53',
  project: 'project',
  name: 'Apple',
  productType: 'weighable',
  taxCategory: 'reduced',
  weighByCustomer: false,
  referenceUnit: 'kg',
  encodingUnit: 'g',
  pluSet: ['4128'],
  codes: [{ code: '232323', template: 'ean13_instore' }],
};

/**
 * No documented sample uses encodingUnit "price"; the unit is listed in api_products.md "Supported Units"
 * ("price: the encoded number should be interpreted as total price"). This product uses only documented
 * fields and values; the Code Object v2 `encodingUnit` overrides the product's.
 */
export const DocsDerivedPriceEncodedProductV2 = {
  sku: 'sausage-mix',
  project: 'project',
  name: 'Sausage selection',
  productType: 'weighable',
  encodingUnit: 'price',
  codes: [{ code: '292929', template: 'ean13_instore_chk', encodingUnit: 'price' }],
};

/**
 * snabble/docs file_import_formats.md — products.csv with prices: deposits (productType deposit, SKUs 49/50),
 * a product referring to a deposit (51 -> 49) and a bundle (52 bundles 51, deposit 50), weighable 53.
 * Values are strings as in CSV; prices are integers in cents.
 */
export const DocsProductsCsv = [
  '#sku,name,taxCategory,depositProduct,bundledProduct,imageUrl,productType,price,discountedPrice',
  '48,duplo white,normal,,,https://snabble.io/demodata/images/duplo-white-single.jpg,default,35,30',
  '49,Deposit,normal,,,,deposit,8,',
  '50,Deposit Six Pack,normal,,,,deposit,48,',
  '51,Soda,normal,49,,,default,180,',
  '52,Six Pack Soda,normal,50,51,,default,1080,1000',
  '53,Apple,normal,,,,weighable,,',
].join('\n');

/** The same deposit/bundle products as JSON (v2 field names, values from DocsProductsCsv). */
export const DocsDerivedDepositProducts = [
  { sku: '49', name: 'Deposit', taxCategory: 'normal', productType: 'deposit' },
  { sku: '50', name: 'Deposit Six Pack', taxCategory: 'normal', productType: 'deposit' },
  { sku: '51', name: 'Soda', taxCategory: 'normal', productType: 'default', depositProduct: '49', codes: [{ code: '46654261', template: 'default' }] },
  { sku: '52', name: 'Six Pack Soda', taxCategory: 'normal', productType: 'default', depositProduct: '50', bundledProduct: '51', codes: [{ code: '33453234', template: 'default' }] },
];

/** snabble/docs file_import_formats.md — codes.csv (transmissionCode optional). */
export const DocsCodesCsv = ['#code,sku,transmissionCode', '42276630,48,', '42123123,48,1231', '46654261,51,', '44444231,51,4442', '33453234,52,'].join('\n');

/** snabble/docs file_import_formats.md — prices.csv (pricing categories default/cheap/expensive). */
export const DocsPricesCsv = ['#sku,pricingCategory,listPrice,discountedPrice', '48,default,35,30', '48,cheap,22,', '51,default,180,', '51,expensive,240,200', '52,default,1080,1000'].join('\n');

/**
 * snabble/Android-SDK core/src/test/resources/product.json — a resolved product as an SDK fixture:
 * `price` is an OBJECT {category, listPrice, discountedPrice: null}, `weighing` is the NUMBER 0,
 * `shopID` "1775", `bundles` [].
 */
export const SdkFixtureResolvedProduct = {
  sku: '1',
  project: 'test',
  name: 'Chiasamen',
  subtitle: 'Seeberger',
  description: 'Chiasamen wurden schon von den Mayas und Azteken als ein Grundnahrungsmittel verwendet.',
  taxCategory: 'normal',
  codes: [{ code: '4008258510001', template: 'default' }],
  productType: 'default',
  shopID: '1775',
  weighing: 0,
  price: { category: 'default', listPrice: 399, discountedPrice: null },
  bundles: [],
};

/** snabble/docs api_products.md — batch "Result Message" (ndjson line). */
export const DocsProductResultMessage = { sku: '1120325205', status: 'ok', message: '' };

/** snabble/docs api_products.md — Product List v2 (`// …` comment in the docs removed). */
export const DocsProductListV2 = { products: [{ sku: '1120325205', name: 'Premium-Holzöl' }] };

// ---------------------------------------------------------------------------------------------
// Pricing (legacy pricing API)
// ---------------------------------------------------------------------------------------------

/** snabble/docs api_pricing.md — PricingCategory. */
export const DocsPricingCategory = {
  id: 'normal',
  project: 'project',
  name: 'normal prices',
  priority: 2,
  shops: [{ id: 'shop-id-1' }, { id: 'shop-id-2' }],
  links: { self: { href: '/project/pricing/categories/id/normal' } },
};

/** snabble/docs api_pricing.md — PricingCategoryList (category without `priority`). */
export const DocsPricingCategoryList = {
  links: { self: { href: '/project/pricing/categories' } },
  categories: [
    {
      id: 'normal',
      project: 'project',
      name: 'normal prices',
      shops: [{ id: 'shop-id-1' }, { id: 'shop-id-2' }],
      links: { self: { href: '/project/pricing/categories/id/normal' } },
    },
  ],
};

/** snabble/docs api_pricing.md — Pricing object. Note the key is `link` (singular) in the docs sample. */
export const DocsPricing = {
  sku: 'sku',
  project: 'project',
  prices: [{ category: 'normal', listPrice: 199, discountedPrice: 149, customerCardPrice: 129, basePrice: '14.90 €/kg' }],
  link: {
    self: { href: '/project/pricing/products/sku/some-sku' },
    product: { href: '/project/products/sku/some-sku' },
  },
};

/** snabble/docs api_pricing.md — Price object (basePrice is display text, amounts are int64). */
export const DocsLegacyPrice = { category: 'normal', listPrice: 199, discountedPrice: 149, customerCardPrice: 129, basePrice: '14.90 €/kg' };

/** snabble/docs api_pricing.md — PricingBatchUpdate. Docs write `"op": "put',` (mismatched quote); repaired. `prices: [ … ]` placeholder filled with one price. */
export const DocsPricingBatchUpdate = { op: 'put', item: { sku: 'a-product', prices: [DocsLegacyPrice] } };

/** snabble/docs api_pricing.md — PriceBatchUpdate. */
export const DocsPriceBatchUpdate = {
  sku: 'a-product',
  category: 'normal',
  listPrice: 199,
  discountedPrice: 149,
  customerCardPrice: 129,
  basePrice: '14.90 €/kg',
};

// ---------------------------------------------------------------------------------------------
// Checkout (cart, checkout info, checkout process)
// ---------------------------------------------------------------------------------------------

/**
 * snabble/docs api_checkout.md — Cart example. Notes: no `id` on items, no clientID/appUserID,
 * sku "4" has a 12-digit scannedCode, a trailing comma after the last item (removed), loyaltyCard "...".
 */
export const DocsCart = {
  session: 'd06474fa-1584-11e8-b642-0ed5f89f718b',
  shopID: 'shop-01',
  items: [
    { sku: '1', amount: 2, scannedCode: '0000000000001' },
    { sku: '2', amount: 1, weight: 102, weightUnit: 'g', scannedCode: '0000000000002' },
    { sku: '3', amount: 42, scannedCode: '0000000000003' },
    { sku: '4', amount: 1, units: 6, scannedCode: '000000000004' },
    { sku: '5', amount: 1, price: 129, scannedCode: '0000000000005' },
  ],
  customer: { loyaltyCard: '...' },
};

/**
 * snabble/docs api_checkout.md — Signed Checkout Info example. Notes: `availableMethods` is an array of
 * strings ("cash","girocard","sepa","visa","mastercard") — the SDKs instead require
 * `paymentMethods: [{id, acceptedOriginTypes}]`; no `paymentMethods` => iOS fails to decode. Shop uses
 * `externalID`; `saleRestriction` "" on one item and absent on another; `createdAt` with milliseconds;
 * `taxRate` strings here; signature ends with "..".
 */
export const DocsSignedCheckoutInfo = {
  links: { checkoutProcess: { href: '/demo/checkout/process' } },
  checkoutInfo: {
    price: {
      tax: { '19': 7673 },
      taxNet: { '19': 40382 },
      taxPre: { '19': 48055 },
      netPrice: 40382,
      price: 48055,
    },
    availableMethods: ['cash', 'girocard', 'sepa', 'visa', 'mastercard'],
    shopID: 'shop-01',
    shop: {
      externalID: 'shop-1234',
      street: 'Shop Street 3',
      zip: '12345',
      state: 'Shop State',
      country: 'Some Country',
      city: 'Some City',
      phone: '+4912342356',
      email: 'shop@someshop.de',
      name: 'Some Shop',
    },
    lineItems: [
      {
        id: 'e25bc1ee-5233-11e9-9e12-68f7286a148f',
        type: 'default',
        totalPrice: 798,
        amount: 2,
        name: 'Kugelschreiber tarent rot',
        price: 399,
        taxRate: '19',
        sku: '1',
        scannedCode: '0000000000001',
        saleRestriction: 'min_age_18',
      },
      {
        id: 'ecac5c4e-5233-11e9-b17e-68f7286a148f',
        type: 'default',
        price: 1099,
        name: 'tarent logo-Cap grau',
        totalPrice: 1099,
        amount: 1,
        taxRate: '19',
        sku: '2',
        scannedCode: '0000000000002',
        saleRestriction: '',
      },
      {
        id: 'f660bac8-5233-11e9-a689-68f7286a148f',
        type: 'default',
        amount: 42,
        totalPrice: 46158,
        name: 'tarent logo-Cap rot',
        price: 1099,
        sku: '3',
        taxRate: '19',
        scannedCode: '0000000000003',
      },
    ],
    currency: 'EUR',
    project: 'demo',
    session: 'd06474fa-1584-11e8-b642-0ed5f89f718b',
    clientID: 'app-id-12345',
    createdAt: '2018-06-19T09:59:29.245Z',
    customer: { loyaltyCard: '...' },
  },
  signature: 'Dynit3mnsBnM8eA9..',
};

/** snabble/docs api_checkout.md — Create Checkout Process Request (paymentMethod "sepa"; placeholders in the docs). */
export const DocsCreateCheckoutProcessRequest = {
  signedCheckoutInfo: '<.. signedCheckoutInfo ..>',
  paymentMethod: 'sepa',
  paymentInformation: '<.. some information depending on payment system ..>',
};

/**
 * snabble/docs api_checkout.md — Checkout Process example. Notes: NO `id`, NO `paymentState`, NO
 * `currency`, NO `routingTarget` (all four required by iOS); `links.payment` present; supervisorApproval /
 * paymentApproval null; checkoutInfo/pricing are placeholders in the docs.
 */
export const DocsCheckoutProcess = {
  links: {
    self: { href: '/demo/checkout/process/f42a5718-1621-11e8-b642-0ed5f89f718b' },
    approval: { href: '/demo/checkout/process/f42a5718-1621-11e8-b642-0ed5f89f718b/approval' },
    payment: { href: '/demo/checkout/payment' },
  },
  supervisorApproval: null,
  paymentApproval: null,
  aborted: false,
  checkoutInfo: '<.. checkoutInfo ..>',
  paymentMethod: 'cash',
  pricing: '<.. pricing ..>',
  modified: false,
  processedOffline: false,
};

/** snabble/docs api_checkout.md — Checkout Process List (second id contains "xx", not a UUID). */
export const DocsCheckoutProcessList = {
  processes: [
    {
      links: {
        self: { href: '/demo/checkout/process/f42a5718-1621-11e8-b642-0ed5f89f718b' },
        approval: { href: '/demo/checkout/process/f42a5718-1621-11e8-b642-0ed5f89f718b/approval' },
        payment: { href: '/demo/checkout/payment' },
      },
      supervisorApproval: null,
      paymentApproval: null,
      aborted: false,
      checkoutInfo: '<.. checkoutInfo ..>',
      paymentMethod: 'cash',
      paymentState: 'pending',
      pricing: '<.. pricing ..>',
      modified: false,
    },
    {
      links: {
        self: { href: '/demo/checkout/process/f42a5718-1621-11e8-b642-xxd5f89f718b' },
        approval: { href: '/demo/checkout/process/f42a5718-1621-11e8-b642-xxd5f89f718b/approval' },
        payment: { href: '/demo/checkout/payment' },
      },
      supervisorApproval: null,
      paymentApproval: null,
      aborted: false,
      checkoutInfo: '<.. checkoutInfo ..>',
      paymentMethod: 'cash',
      paymentState: 'pending',
      pricing: '<.. pricing ..>',
      modified: false,
    },
  ],
};

/**
 * snabble/docs api_checkout.md — Pricing example. Notes: `taxRate` is the NUMBER 19 (spec: string), line
 * items have no `id`/`type` (iOS requires both).
 */
export const DocsPricingOfProcess = {
  price: { tax: { '19': 7673 }, taxNet: { '19': 40382 }, taxPre: { '19': 48055 }, netPrice: 40382, price: 48055 },
  lineItems: [
    { totalPrice: 798, amount: 2, name: 'Kugelschreiber tarent rot', price: 399, taxRate: 19, sku: '1', scannedCode: '0000000000001' },
    { price: 1099, name: 'tarent logo-Cap grau', totalPrice: 1099, amount: 1, taxRate: 19, sku: '2', scannedCode: '0000000000002' },
  ],
};

/** snabble/docs api_checkout.md — Payment Result example (transactionTime is a STRING unix timestamp). */
export const DocsPaymentResult = {
  transactionID: 'transaction-id-1234',
  transactionTime: '1543328941',
  approvalCode: 'approval-1234',
  mandateReference: 'reference-id',
  transactionResult: 'success',
};

/** snabble/docs api_checkout.md — Checkout Approval, Abort, Close, Set Payment State. */
export const DocsCheckoutApproval = { type: 'supervisor' };
export const DocsAbortRequest = { aborted: true };
/** `closed` was removed from the process later (API changelog per spec: 2019-12). */
export const DocsCloseRequest = { closed: true };
export const DocsSetPaymentStateRequest = { paymentState: 'successful' };

/**
 * snabble/docs api_checkout.md — Update Pricing Request. Notes: `taxRate` NUMBER 19, `price` WITHOUT
 * `netPrice` (if echoed as process.pricing.price, iOS fails: netPrice is required), no line item id/type.
 */
export const DocsUpdatePricingRequest = {
  pricing: {
    lineItems: [{ sku: '1', amount: 1, taxRate: 19, price: 399, totalPrice: 399, name: 'Kugelschreiber tarent rot' }],
    price: { price: 399 },
  },
};

/**
 * snabble/docs api_checkout.md — invalid_cart_item structured error. Note: documented at TOP LEVEL
 * ({type, details}), but both SDKs only understand the wrapped form {error: {type, details}}.
 */
export const DocsInvalidCartItemError = {
  type: 'invalid_cart_item',
  details: [
    { sku: 'some-sku', type: 'sale_stop', message: 'product is excluded from sale' },
    { sku: 'some-other-sku', type: 'product_not_found', message: 'product not found' },
  ],
};

/** snabble/docs api_general.md — structured error example (top level). */
export const DocsStructuredError = { type: 'shop_not_found', message: "shop with id 'some-shop' not found" };

/**
 * snabble/docs example_pos.md — checkout info answer of the walkthrough. Notes: payment method
 * "posQRCode" (SDKs use "qrCodePOS"), `taxRate` number 19, no line-item id/type, session "" and
 * shopID "", price has `tax` but no taxNet/taxPre, signature "...".
 */
export const DocsExamplePosCheckoutInfo = {
  checkoutInfo: {
    availableMethods: ['cash', 'girocard', 'sepa', 'visa', 'mastercard', 'posQRCode'],
    lineItems: [{ amount: 2, name: 'Kugelschreiber tarent rot', price: 399, sku: '1', taxRate: 19, totalPrice: 798 }],
    price: { netPrice: 671, price: 798, tax: { '19': 127 } },
    project: 'test-project-faa116',
    session: '',
    shopID: '',
  },
  links: { checkoutProcess: { href: '/test-project-faa116/checkout/process' } },
  signature: '...',
};

/** snabble/docs example_pos.md — cart sent in the walkthrough (shopID "", no scannedCode). */
export const DocsExamplePosCart = { items: [{ sku: '1', amount: 2 }], shopID: '' };

/** snabble/docs example_pos.md — create process request (POST /{project}/checkout/process). */
export const DocsExamplePosCreateProcessRequest = { signedCheckoutInfo: '<--SNIP-->', paymentMethod: 'posQRCode' };

/**
 * snabble/docs example_pos.md — 201 answer (Location /test-project-faa116/checkout/process/88bab157-…).
 * Notes: `paymentInformations` (PLURAL; SDKs read `paymentInformation`), qrCodeContent
 * "sellfio:<id>" (spec: "service:<id>", PoS docs: "snabble:<id>"), no currency / routingTarget,
 * pricing.price without taxNet/taxPre.
 */
export const DocsExamplePosCheckoutProcess = {
  aborted: false,
  checkoutInfo: '<--SNIP-->',
  createdAt: '2018-03-08T16:51:30.279Z',
  id: '88bab157-7d5b-443d-8033-1c5c423bb97e',
  links: {
    approval: { href: '/test-project-faa116/checkout/process/88bab157-7d5b-443d-8033-1c5c423bb97e/approval' },
    self: { href: '/test-project-faa116/checkout/process/88bab157-7d5b-443d-8033-1c5c423bb97e' },
  },
  modified: false,
  paymentApproval: null,
  paymentInformations: { qrCodeContent: 'sellfio:88bab157-7d5b-443d-8033-1c5c423bb97e' },
  paymentMethod: 'posQRCode',
  paymentState: 'pending',
  pricing: {
    lineItems: [{ amount: 2, name: 'Kugelschreiber tarent rot', price: 399, sku: '1', taxRate: 19, totalPrice: 798 }],
    price: { netPrice: 671, price: 798, tax: { '19': 127 } },
  },
  project: 'test-project-faa116',
  supervisorApproval: null,
};

/**
 * snabble/docs example_pos.md — PATCH combining paymentState AND pricing in one body (the spec lists
 * them as separate PATCH shapes), and the answer whose pricing.price has only `price`.
 */
export const DocsExamplePosPatchRequest = {
  paymentState: 'successful',
  pricing: {
    lineItems: [{ sku: '1', amount: 1, taxRate: 19, price: 399, totalPrice: 399, name: 'Kugelschreiber tarent rot' }],
    price: { price: 399 },
  },
};
export const DocsExamplePosPatchedProcess = {
  ...DocsExamplePosCheckoutProcess,
  paymentState: 'successful',
  pricing: {
    lineItems: [{ amount: 1, name: 'Kugelschreiber tarent rot', price: 399, sku: '1', taxRate: 19, totalPrice: 399 }],
    price: { price: 399 },
  },
};

// ---------------------------------------------------------------------------------------------
// PoS checkout (api_pos_integration.md) and vPOS (api_vpos.md)
// ---------------------------------------------------------------------------------------------

/** snabble/docs api_pos_integration.md — QR code content handed to the PoS ("snabble:" prefix). */
export const DocsPosQrCode = 'snabble:752dd716-ec0c-11e8-8528-68f7286a148f';

/** snabble/docs api_pos_integration.md — PATCH (application/merge-patch+json) to start processing. */
export const DocsPosPatchProcessing = { state: 'processing', processedBy: 'pos-1' };

/**
 * snabble/docs api_pos_integration.md — answer to the processing PATCH. Notes: `tax`/`taxNet`/`netPrice`/
 * `price` (NOT taxShares/totalPrice as in the spec), `taxRate` NUMBER 19, second item has no sku (and a
 * missing comma after scannedCode in the docs, repaired).
 */
export const DocsPosCheckoutProcessProcessing = {
  lineItems: [
    { scannedCode: '0000000000001', totalPrice: 798, amount: 2, price: 399, taxRate: 19, sku: '1' },
    { scannedCode: '0000000000002', price: 1099, totalPrice: 1099, amount: 1, taxRate: 19 },
  ],
  tax: { '19': 7673 },
  taxNet: { '19': 40382 },
  netPrice: 40382,
  price: 48055,
  state: 'processing',
  processedBy: 'pos-1',
  loyaltyCard: '12345678',
};

/** snabble/docs api_pos_integration.md — PATCH reporting success (same numeric taxRate, no processedBy). */
export const DocsPosPatchSuccessful = {
  lineItems: DocsPosCheckoutProcessProcessing.lineItems,
  tax: { '19': 7673 },
  taxNet: { '19': 40382 },
  netPrice: 40382,
  price: 48055,
  state: 'successful',
  loyaltyCard: '12345678',
};

/** snabble/docs api_pos_integration.md — PATCH reporting failure. */
export const DocsPosPatchFailed = { state: 'failed', failedReason: 'Payment failed' };

/** snabble/docs api_pos_integration.md — data model example (state "pending"). */
export const DocsPosCheckoutProcess = { ...DocsPosCheckoutProcessProcessing, state: 'pending' };

/**
 * snabble/docs api_vpos.md — vPOS checkout data model. Notes: `shopId` (lower-case d), `amount` given as
 * STRINGS "2"/"1" on some items, the apple item has `amount` TWICE (1 then "1"; last wins in JSON.parse
 * => "1"), discount item totalPrice 16 with price -38, type "discount" (no "promotion"), state "completed",
 * taxShares with negative values.
 */
export const DocsVposCheckout = {
  shopId: '1',
  loyaltyCard: '...',
  items: [
    { id: '54ddafde-5207-11e9-b1c7-68f7286a148f', sku: '1', type: 'default', name: 'Wine', amount: 2, price: 119, taxRate: '19', totalPrice: 238, saleRestriction: 'min_age_18', scannedCode: '0000000000001' },
    { id: 'b33a8950-521e-11e9-934a-68f7286a148f', sku: 'bottle', type: 'deposit', refersTo: '54ddafde-5207-11e9-b1c7-68f7286a148f', name: 'Deposit', amount: '2', price: 8, taxRate: '0', totalPrice: 16 },
    { id: 'aded2a10-521f-11e9-96a0-68f7286a148f', type: 'discount', refersTo: '54ddafde-5207-11e9-b1c7-68f7286a148f', name: 'Wine promotion', amount: '1', price: -38, taxRate: '0', totalPrice: 16 },
    { id: '5c8c5168-5207-11e9-bf60-68f7286a148f', sku: '2', type: 'default', weight: 42, weightUnit: 'g', name: 'Apple', amount: '1', price: 199, referenceUnit: 'kg', taxRate: '7', totalPrice: 8, scannedCode: '0000000000420' },
    { id: '64769fc8-5207-11e9-8f9a-68f7286a148f', sku: '3', type: 'default', name: 'Rolls', amount: 1, units: 6, price: 32, taxRate: '7', totalPrice: 192, scannedCode: '0000000000062' },
    { id: '6a347656-5207-11e9-9d96-68f7286a148f', sku: '4', type: 'default', name: 'Bread', amount: 1, price: 129, taxRate: '7', totalPrice: 129, scannedCode: '0000000001298' },
  ],
  taxShares: [
    { rate: '19', net: 200, share: 38, total: 238 },
    { rate: '7', net: 307, share: 22, total: 329 },
    { rate: '0', net: -22, share: 0, total: -22 },
  ],
  netPrice: 485,
  totalPrice: 545,
  orderId: 'f30b0aa4-5210-11e9-a411-68f7286a148f',
  externalCheckoutId: '1',
  paymentInformation: { mandateReference: '...' },
  state: 'completed',
  receiptBuffer: 'c25hYmJsZQo=',
};

/** snabble/docs api_vpos.md — error example (line-item and cart errors). */
export const DocsVposErrors = {
  items: [{ id: '00883a9e-520c-11e9-a629-68f7286a148f', errors: [{ type: 'invalid_line_item', message: 'Invalid line item' }] }],
  errors: [{ type: 'invalid_cart', message: 'Invalid line item' }],
};

/** snabble/docs api_vpos.md — "Obtain Checkout Information" request and 201 answer. */
export const DocsVposObtainRequest = {
  shopId: '1',
  loyaltyCard: '...',
  items: [{ id: '54ddafde-5207-11e9-b1c7-68f7286a148f', sku: '1', type: 'default', amount: 2, scannedCode: '0000000000001' }],
};
export const DocsVposObtainResponse = {
  shopId: '1',
  loyaltyCard: '...',
  items: [{ id: '54ddafde-5207-11e9-b1c7-68f7286a148f', sku: '1', type: 'default', name: 'Product', amount: 2, price: 119, taxRate: '19', totalPrice: 238, saleRestriction: 'min_age_18', scannedCode: '0000000000001' }],
  taxShares: [{ rate: '19', net: 200, share: 38, total: 238 }],
  netPrice: 200,
  totalPrice: 238,
};

/** snabble/docs api_vpos.md — "Place completed Checkout" request; the answer adds externalCheckoutId/receiptBuffer. */
export const DocsVposPlaceCompleted = {
  shopId: '1',
  items: DocsVposObtainResponse.items,
  taxShares: [{ rate: '19', net: 200, share: 38, total: 238 }],
  netPrice: 200,
  totalPrice: 238,
  orderId: 'f30b0aa4-5210-11e9-a411-68f7286a148f',
  paymentInformation: { mandateReference: '...' },
  state: 'completed',
};
export const DocsVposPlaceCompletedResponse = { ...DocsVposPlaceCompleted, externalCheckoutId: '1', receiptBuffer: 'c25hYmJsZQo=' };

// ---------------------------------------------------------------------------------------------
// Orders
// ---------------------------------------------------------------------------------------------

/**
 * snabble/docs api_orders.md — Order example. Docs JSON repaired: `"externalID": test"` (missing quote),
 * unquoted key `customer:`, unterminated `"Pommes,`, `// see checkout documentation` comment. Notes:
 * shopID is the STRING "128" (spec: int), key `paymentState` (table says `paymentStatus`), dates with ms,
 * session is not a valid UUID ("asdaf24u-…"), line item without id/type, taxRate string "7".
 */
export const DocsOrder = {
  id: '99e13f9f-0412-4686-907a-331003b2a703',
  project: 'test-project-faa116',
  clientID: 'app-id-12345',
  date: '2018-06-05T12:25:06.821Z',
  createdAt: '2018-06-05T12:25:07.519Z',
  shopID: '128',
  shop: {
    externalID: 'test',
    street: 'Street 1',
    zip: '12345',
    state: 'State',
    country: 'Country',
    city: 'City',
    phone: '+49123456',
    email: 'test@test.de',
    name: 'Integration Test',
  },
  customer: { loyaltyCard: '12354567' },
  paymentMethod: 'cash',
  paymentState: 'successful',
  lineItems: [{ sku: '20001', name: 'Pommes', amount: 2, price: 107, taxRate: '7', totalPrice: 214 }],
  price: { price: 214, netPrice: 200, tax: { '7': 14 }, taxNet: { '7': 200 }, taxPre: { '7': 214 } },
  session: 'asdaf24u-0124-77a4-77a8-ada100011112',
  currency: 'EUR',
  checkoutProcess: {},
  links: { self: { href: '/test-project-faa116/orders/99e13f9f-0412-4686-907a-331003b2a703' } },
};

/** snabble/docs api_orders.md — deprecated order statistics (dates WITHOUT milliseconds). */
export const DocsOrderStatistics = {
  count: 44,
  total: 2139104,
  items: [
    { count: 0, date: '2018-06-03T00:00:00Z', total: 0 },
    { count: 44, date: '2018-06-04T00:00:00Z', total: 2139104 },
    { count: 0, date: '2018-06-05T00:00:00Z', total: 0 },
  ],
  links: { self: { href: '/test-project-faa116/orders/statistics' } },
};

/** snabble/docs api_orders.md — list query parameter example (RFC 3339 with offset, no ms). */
export const DocsOrdersDateQuery = '2018-05-02T00:00:00-02:00';

// =================================================================================================
// App-facing responses as the SDKs decode them (constructed from the decoders, NOT from docs)
// =================================================================================================

/**
 * App purchase list (GET metadata link appUserOrders / clientOrders) that BOTH SDKs accept:
 * iOS OrderList.swift (Order) + Android ReceiptsApi.java (ApiOrder). Date with exactly 3 fraction digits
 * and `Z` (Android), shopID string (iOS).
 */
export const SdkOrderList = {
  orders: [
    {
      project: 'acme-a1b2c3',
      id: '3f0a2e4c-9b1d-4c55-8d7e-0c1f2a3b4c5d',
      date: '2024-05-02T10:11:12.345Z',
      shopID: '1774',
      shopName: 'Acme Berlin Mitte',
      price: 1897,
      links: { receipt: { href: '/acme-a1b2c3/orders/3f0a2e4c-9b1d-4c55-8d7e-0c1f2a3b4c5d/receipt' } },
    },
  ],
};

/**
 * App coupon list ({coupons: [...]}, project link `coupons` / metadata `coupons`) accepted by both SDKs
 * (iOS Coupon.swift + Android coupons/Coupon.kt). type must be manual|printed|digital for Android.
 */
export const SdkCouponList = {
  coupons: [
    {
      id: 'c-10-percent',
      projectID: 'acme-a1b2c3',
      type: 'digital',
      name: '10 % off',
      description: 'On your whole purchase',
      promotionDescription: 'Only this week',
      disclaimer: 'Not combinable',
      code: '2900000000018',
      codes: [{ code: '2900000000018', template: 'default' }],
      colors: { background: '#ff0000', foreground: '#ffffff' },
      image: {
        name: 'ten-percent',
        formats: [
          { size: 'xhdpi', url: 'https://cdn.example.com/coupons/ten-percent@2x.webp', contentType: 'image/webp', width: 640, height: 320 },
          { size: 'xxhdpi', url: 'https://cdn.example.com/coupons/ten-percent@3x.webp', contentType: 'image/webp', width: 960, height: 480 },
        ],
      },
      validFrom: '2024-05-01T00:00:00Z',
      validUntil: '2024-05-31T23:59:59Z',
      percentage: 10,
    },
    { id: 'c-manual-5', projectID: 'acme-a1b2c3', type: 'manual', name: 'Manual 5 %' },
  ],
};

// =================================================================================================
// (b) REQUESTS THE SDKs SEND
// =================================================================================================
// Auth header of both SDKs: `Client-Token: <JWT>` (iOS Project+Network.swift; Android
// SnabbleAuthorizationInterceptor.java, which also sends `Client-ID: <clientID>`). Not `Authorization: Bearer`.

/**
 * iOS cart, POSTed to project links.checkoutInfo.href (snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutData.swift
 * `Cart`, items from CartData.swift `CartItem.cartItems`, JSONEncoder => nil optionals are OMITTED).
 * Encoding rules (CartData.swift):
 *  - plain product: {id: cart item uuid, sku, amount: quantity, scannedCode: transmissionCode ?? scanned}
 *  - preWeighed product with a dimension unit: weight = embedded value, amount 1, weightUnit = encodingUnit
 *  - referenceUnit "piece" without embedded data: units = quantity, amount 1, code re-encoded (instore EAN)
 *  - encodingUnit "piece" with embedded data: units = embedded; "price": price = embedded; other: weight = embedded
 *  - price override (e.g. discount label) or reference price override: price = override
 *  - weightUnit = encodingUnit whenever the product/code has one (so "g", "piece" or "price")
 *  - a manual coupon on an item adds {id: new uuid, couponID, refersTo: item uuid, amount: 1}
 *  - cart coupons: {id: uuid, couponID, scannedCode?, amount: 1}
 *  - deposit return vouchers: {id, itemID, type: "depositReturnVoucher", scannedCode, amount: 1}
 *  - requiredInformation is always present ([] or [{id: "taxation", value: "inHouse"|"takeaway"}])
 *  - customer only when a loyalty card is set; appUserID only when an app user exists; no eventType.
 */
export const IosCartRequest = {
  session: '6b1f0c9e-2d4a-4a8e-9f3b-7c2d1e0f4a5b',
  shopID: '1774',
  customer: { loyaltyCard: '2400000012345' },
  items: [
    { id: 'A1E3B2C4-0000-4000-8000-000000000001', sku: '51', amount: 2, scannedCode: '46654261' },
    { id: 'A1E3B2C4-0000-4000-8000-000000000002', sku: '53', amount: 1, scannedCode: '2323230007204', weight: 720, weightUnit: 'g' },
    { id: 'A1E3B2C4-0000-4000-8000-000000000003', sku: 'rolls', amount: 1, scannedCode: '2512340000069', units: 6, weightUnit: 'piece' },
    { id: 'A1E3B2C4-0000-4000-8000-000000000004', sku: 'sausage-mix', amount: 1, scannedCode: '2929290012904', price: 129, weightUnit: 'price' },
    { id: 'A1E3B2C4-0000-4000-8000-000000000005', sku: '48', amount: 1, scannedCode: '42276630', price: 25 },
    { id: 'A1E3B2C4-0000-4000-8000-000000000006', couponID: 'c-manual-5', refersTo: 'A1E3B2C4-0000-4000-8000-000000000005', amount: 1 },
    { id: 'A1E3B2C4-0000-4000-8000-000000000007', couponID: 'c-10-percent', amount: 1 },
    { id: 'A1E3B2C4-0000-4000-8000-000000000008', couponID: 'c-printed-1', scannedCode: '2900000000018', amount: 1 },
    { id: 'A1E3B2C4-0000-4000-8000-000000000009', itemID: 'drv-item-1', type: 'depositReturnVoucher', scannedCode: '9900000000250', amount: 1 },
  ],
  clientID: 'f2b8c9d0e1f24a3b',
  appUserID: '7d6c5b4a-3f2e-1d0c-9b8a-7f6e5d4c3b2a',
  requiredInformation: [{ id: 'taxation', value: 'inHouse' }],
};

/**
 * Android cart, POSTed to project links.checkoutInfo (snabble/Android-SDK
 * core/src/main/java/io/snabble/sdk/shoppingcart/data/cart/BackendCart.kt + ShoppingCart.kt toBackendCart,
 * Gson => nulls omitted, `amount` always present). Differences to iOS:
 *  - `eventType: "cart"` is serialized (BackendCart implements the event Payload)
 *  - shopID is "unknown" when no shop is checked in
 *  - scannedCode is the product's primary lookup code when known, else the scanned code
 *  - unit-based items: amount 1; weight for dimension units, units for "piece", price for "price"
 *    (price = embedded price or the locally computed total); userWeighed: weight = quantity, amount 1
 *  - sku is `product?.sku.toString()` => the string "null" can appear for items without product
 *  - coupon on a product item: {id: new uuid, refersTo, amount: 1, couponID}
 *  - coupon item: {id: backendCouponId, amount: 1, scannedCode?, couponID}
 *  - voucher (newest): {id, amount, type: "depositReturnVoucher", ItemID (capital I!), scannedCode}
 *    (an earlier version serialized the field as `itemId`)
 *  - requiredInformation: [] or [{id: "taxation", value: "inHouse" | "takeaway"}]
 *  - customer: {loyaltyCard} from the project's customer card id
 */
export const AndroidCartRequest = {
  session: '0c7e4d2a-8b6f-4e1d-9a3c-5f2b1e0d9c8a',
  shopID: '1774',
  clientID: 'c0ffee00c0ffee00',
  appUserID: '7d6c5b4a-3f2e-1d0c-9b8a-7f6e5d4c3b2a',
  customer: { loyaltyCard: '2400000012345' },
  items: [
    { id: '5b7c1d2e-0000-4000-8000-000000000001', sku: '51', scannedCode: '46654261', amount: 2 },
    { id: '5b7c1d2e-0000-4000-8000-000000000002', sku: '53', scannedCode: '2323230007204', weightUnit: 'g', weight: 720, amount: 1 },
    { id: '5b7c1d2e-0000-4000-8000-000000000003', sku: 'rolls', scannedCode: '2512340000069', weightUnit: 'piece', amount: 1, units: 6 },
    { id: '5b7c1d2e-0000-4000-8000-000000000004', sku: 'sausage-mix', scannedCode: '2929290012904', weightUnit: 'price', amount: 1, price: 129 },
    { id: '5b7c1d2e-0000-4000-8000-000000000005', refersTo: '5b7c1d2e-0000-4000-8000-000000000001', amount: 1, couponID: 'c-manual-5' },
    { id: '5b7c1d2e-0000-4000-8000-000000000006', amount: 1, scannedCode: '2900000000018', couponID: 'c-printed-1' },
    { id: '5b7c1d2e-0000-4000-8000-000000000007', ItemID: 'drv-item-1', type: 'depositReturnVoucher', scannedCode: '9900000000250', amount: 1 },
  ],
  requiredInformation: [{ id: 'taxation', value: 'takeaway' }],
  eventType: 'cart',
};

/** A valid SignedCheckoutInfo answer both SDKs accept (used inside the create-process examples below). */
export const SdkSignedCheckoutInfo = {
  checkoutInfo: {
    session: '6b1f0c9e-2d4a-4a8e-9f3b-7c2d1e0f4a5b',
    clientID: 'f2b8c9d0e1f24a3b',
    appUserID: '7d6c5b4a-3f2e-1d0c-9b8a-7f6e5d4c3b2a',
    shopID: '1774',
    project: 'acme-a1b2c3',
    currency: 'EUR',
    createdAt: '2024-05-02T10:11:12.345Z',
    paymentMethods: [
      { id: 'qrCodePOS', acceptedOriginTypes: [] },
      { id: 'deDirectDebit', acceptedOriginTypes: ['iban'] },
      { id: 'creditCardVisa', acceptedOriginTypes: ['ipgHostedDataID'] },
    ],
    lineItems: [
      { id: 'A1E3B2C4-0000-4000-8000-000000000001', type: 'default', sku: '51', name: 'Soda', amount: 2, price: 180, totalPrice: 360, scannedCode: '46654261', taxRate: '19' },
      { id: 'dep-1', type: 'deposit', refersTo: 'A1E3B2C4-0000-4000-8000-000000000001', sku: '49', name: 'Deposit', amount: 2, price: 8, totalPrice: 16, taxRate: '19' },
      { id: 'A1E3B2C4-0000-4000-8000-000000000002', type: 'default', sku: '53', name: 'Apple', amount: 1, weight: 720, weightUnit: 'g', referenceUnit: 'kg', price: 390, totalPrice: 281, scannedCode: '2323230007204', taxRate: '7' },
    ],
    price: { price: 657, netPrice: 579, tax: { '19': 60, '7': 18 }, taxNet: { '19': 316, '7': 263 }, taxPre: { '19': 376, '7': 281 } },
    requiredInformation: [{ id: 'taxation', value: 'inHouse' }],
  },
  signature: 'MEUCIQDx…base64…',
  links: { checkoutProcess: { href: '/acme-a1b2c3/checkout/process' } },
};

/**
 * iOS create checkout process (snabble/snabble-ios-sdk Core/Sources/Cart/CheckoutRequests.swift
 * SignedCheckoutInfo.createCheckoutProcess): **PUT** `${signedCheckoutInfo.links.checkoutProcess.href}/${cart.uuid}`
 * (not POST). Body built with JSONSerialization from the RAW JSON dictionary of the checkout info answer
 * (key order and number formatting may differ from what the platform sent — verify signatures on a
 * canonical form). paymentInformation only for methods with stored data:
 * {originType, encryptedOrigin, ...additionalData} (+ `subject` for externalBilling/contactPersonCredentials).
 * processedOffline/finalizedAt only for offline-finalized processes (finalizedAt: ISO 8601 without fraction).
 */
export const IosCreateCheckoutProcessPut = {
  method: 'PUT',
  path: '/acme-a1b2c3/checkout/process/5E2C1A3B-7D4F-4B6A-9C8E-1F2D3C4B5A69',
  body: {
    paymentMethod: 'creditCardVisa',
    signedCheckoutInfo: SdkSignedCheckoutInfo,
    paymentInformation: {
      originType: 'ipgHostedDataID',
      encryptedOrigin: 'bGFyZ2UgYmFzZTY0IFJTQS1PQUVQIGNpcGhlcnRleHQ=',
      cardNumber: 'XXXXXXXXXXXX1111',
      validUntil: '2027/09/30',
    },
  },
};
/** iOS offline-finalized variant (finalizedAt set => processedOffline true). */
export const IosCreateCheckoutProcessOfflineBody = {
  paymentMethod: 'qrCodeOffline',
  signedCheckoutInfo: SdkSignedCheckoutInfo,
  processedOffline: true,
  finalizedAt: '2024-05-02T10:15:00Z',
};

/**
 * Android create checkout process (snabble/Android-SDK core/src/main/java/io/snabble/sdk/checkout/DefaultCheckoutApi.kt
 * createPaymentProcess + CheckoutApi.kt CheckoutProcessRequest): **PUT** `${links.checkoutProcess.href}/${shoppingCart.uuid}`.
 * Body from Gson: signedCheckoutInfo re-serialized ({checkoutInfo, signature, links}), paymentMethod as the
 * enum's serialized id, processedOffline ALWAYS present (false online), finalizedAt "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
 * when offline, paymentInformation {originType, encryptedOrigin} (+ validUntil "yyyy/MM/dd" and cardNumber for
 * PSD2 credit cards; deviceID/deviceName/deviceFingerprint/deviceIPAddress for giropay; subject for external billing).
 * originType falls back to the first acceptedOriginTypes entry of the project's payment method descriptor.
 */
export const AndroidCreateCheckoutProcessPut = {
  method: 'PUT',
  path: '/acme-a1b2c3/checkout/process/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  body: {
    signedCheckoutInfo: SdkSignedCheckoutInfo,
    paymentMethod: 'deDirectDebit',
    paymentInformation: { originType: 'iban', encryptedOrigin: 'c29tZSBSU0EtT0FFUCBlbmNyeXB0ZWQgSUJBTg==' },
    processedOffline: false,
  },
};
/** Android QR code at the PoS: no credentials => no paymentInformation. */
export const AndroidCreateCheckoutProcessQrCodePosBody = {
  signedCheckoutInfo: SdkSignedCheckoutInfo,
  paymentMethod: 'qrCodePOS',
  processedOffline: false,
};

/**
 * Handling of the PUT answer (both SDKs): 200/201 with a CheckoutProcess body = success; 403 or 409 =>
 * GET the SAME url (`${checkoutProcess href}/${uuid}`) and use that process; 404 => Android resets the
 * checkout; iOS: network error (non-offline method) => GET the same url, retried every 1 s on network errors.
 */
export const SdkPutFallbackGet = { method: 'GET', path: '/acme-a1b2c3/checkout/process/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' };

/**
 * Polling (both SDKs): GET `process.links.self.href`; Android every 2 s (Checkout.kt scheduleNextPoll) while
 * waiting (WAIT_FOR_APPROVAL/GATEKEEPER/SUPERVISOR, VERIFYING_PAYMENT_METHOD, PAYMENT_PROCESSING,
 * PAYMENT_APPROVED with open fulfillments, …); 404 => reset. iOS polls links.self via CheckoutProcess.update
 * (older PaymentProcessPoller used a 1 s timer). Android derives the checkout id from the last path segment of links.self.
 */
export const SdkPoll = { method: 'GET', path: '/acme-a1b2c3/checkout/process/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' };

/**
 * Abort (both SDKs): PATCH `process.links.self.href`, Content-Type application/json, body exactly
 * `{"aborted":true}`. iOS decodes the answer as a full CheckoutProcess (only 200/201 count as success);
 * Android only checks for a 2xx.
 */
export const SdkAbortPatch = {
  method: 'PATCH',
  path: '/acme-a1b2c3/checkout/process/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  body: { aborted: true },
};

/**
 * Payment authorization for one-time tokens (Apple Pay / Google Pay): POST `process.links.authorizePayment.href`
 * (Android CheckoutApi.kt AuthorizePaymentRequest; newest adds name/countryCode/state).
 */
export const AndroidAuthorizePaymentPost = {
  method: 'POST',
  path: '/acme-a1b2c3/checkout/process/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d/authorize-payment',
  body: { encryptedOrigin: 'eyJzaWduYXR1cmUiOiIuLi4ifQ==', name: 'Erika Mustermann', countryCode: 'DE', state: 'BE' },
};

/** A checkout process answer both SDKs accept (PUT/GET/PATCH answers). */
export const SdkCheckoutProcess = {
  id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  links: {
    self: { href: '/acme-a1b2c3/checkout/process/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' },
    approval: { href: '/acme-a1b2c3/checkout/process/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d/approval' },
    receipt: { href: '/acme-a1b2c3/orders/3f0a2e4c-9b1d-4c55-8d7e-0c1f2a3b4c5d/receipt' },
  },
  aborted: false,
  modified: false,
  paymentMethod: 'qrCodePOS',
  paymentState: 'pending',
  paymentInformation: { qrCodeContent: 'service:9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' },
  routingTarget: 'none',
  currency: 'EUR',
  pricing: {
    lineItems: SdkSignedCheckoutInfo.checkoutInfo.lineItems,
    price: SdkSignedCheckoutInfo.checkoutInfo.price,
  },
  checks: [{ id: 'chk-1', type: 'min_age', requiredAge: 18, performedBy: 'supervisor', state: 'pending', links: { self: { href: '/acme-a1b2c3/checkout/process/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d/checks/chk-1' } } }],
  fulfillments: [
    {
      id: 'ful-1',
      type: 'vending-machine',
      state: 'allocated',
      refersTo: ['A1E3B2C4-0000-4000-8000-000000000001'],
      errors: [],
      links: { self: { href: '/acme-a1b2c3/checkout/process/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d/fulfillments/ful-1' } },
    },
  ],
  createdAt: '2024-05-02T10:11:13.001Z',
};

/** Error envelope both SDKs understand for POST checkout info (invalid_cart_item). */
export const SdkInvalidCartItemError = {
  error: {
    type: 'invalid_cart_item',
    message: 'one or more cart items are invalid',
    details: [
      { type: 'sale_stop', sku: '52', id: 'A1E3B2C4-0000-4000-8000-000000000005', message: 'product is excluded from sale' },
      { type: 'product_not_found', sku: 'unknown-sku', id: 'A1E3B2C4-0000-4000-8000-000000000001', message: 'product not found' },
    ],
  },
};

/**
 * snabble/Android-SDK core/src/test/resources/metadata.json, its frame: the global links, the kill
 * flag and the first project without its code templates and prefixes (its shops are
 * SdkFixtureMetadataShops). Note `createAppUser` and `tokens` without a query: the SDK appends one.
 */
export const SdkFixtureMetadata = {
  links: {
    appUser: { href: '/apps/users/{appUserID}' },
    appUserOrders: { href: '/apps/users/{appUserID}/orders' },
    clientOrders: { href: '/clients/{clientID}/orders' },
    createAppUser: { href: '/apps/test/users' },
    self: { href: '/metadata/app/test-app/version/1.0' },
  },
  metadata: { kill: false },
  projects: [
    {
      currency: 'EUR',
      customerCards: { accepted: ['knauber'] },
      decimalDigits: 2,
      enableCheckout: true,
      id: 'test',
      links: {
        appEvents: { href: '/test/events' },
        appdb: { href: '/test/appdb' },
        checkoutInfo: { href: '/test/checkout/info' },
        productBySku: { href: '/test/products/sku/{sku}' },
        resolvedProductBySku: { href: '/test/resolvedProducts/sku/{sku}' },
        resolvedProductLookUp: { href: '/test/resolvedProducts/lookUp' },
        self: { href: '/metadata/project/test' },
        shops: { href: '/test/shops' },
        tokens: { href: '/test/tokens' },
      },
      locale: 'de_DE',
      roundingMode: 'up',
      scanFormats: ['ean8', 'ean13', 'code128'],
      shops: SdkFixtureMetadataShops,
    },
  ],
};

/** snabble/snabble-ios-sdk Network/Tests/Resources/UsersResponse.json: a new app user and its token (expiresAt as the fixture has it). */
export const SdkFixtureUsersResponse = {
  appUser: { id: 'a10cd49b-994b-4d88-b5b9-f3a4edc49929', secret: 'abcdefghijklmnopqrstuvwxyz1234567890ABCDEFGHIJ' },
  token: { token: 'eyJhbGciOiJIUzI1NiJ9.e30.r_5gtHitmkdPAdgj2Ytt90oL77KiUzZJG5d_T7biXGs', id: 'a10cd49b-994b-4d88-b5b9-f3a4edc49929', issuedAt: 1680000000, expiresAt: 1680000000 },
};
