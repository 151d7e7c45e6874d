import { Cart, checkout, SignedCheckoutInfo } from '../../../subjects/checkout.js';
import { ShopId } from '../../../subjects/shops.js';
import { AppError } from '../../errors.js';
import type { ServiceClient } from '../../messaging/client.js';
import { documentedBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';
import { sendJsonBytes } from '../json-bytes.js';

const tags = ['checkout'];

/**
 * A cart body as the worker will validate it (every worker parses its messages), once its shopID is
 * known to be one: a missing or malformed shopID is the spec's own error, `bad_shop_id`.
 */
export function cartBody(body: unknown): Cart {
  if (!ShopId.safeParse((body as { shopID?: unknown } | null)?.shopID).success) throw new AppError(400, 'bad_shop_id', 'shopID is missing or not a shop id');
  return body as Cart;
}

/**
 * An app user's token buys for that app user: the cart's `appUserID` is the token's claim (filled
 * in when the cart names none), so that an order lands in the buyer's own purchase history and a
 * coupon limited per app user counts the buyer's redemptions, not a name the app chose.
 */
function ownCart(cart: Cart, appUserID: string | undefined): Cart {
  if (!appUserID) return cart;
  if (cart.appUserID !== undefined && cart.appUserID !== appUserID) throw AppError.forbidden("the cart's appUserID is not the token's app user");
  cart.appUserID = appUserID;
  return cart;
}

export function checkoutRoutes(app: ZodApp, client: ServiceClient): void {
  app.post(
    '/:project/checkout/info',
    {
      config: { auth: { permissions: ['productsRead'] }, errorEnvelope: 'both' },
      schema: {
        tags,
        summary: 'Price a cart into a signed checkout info with the payment methods it may use',
        description: [
          'Cart items come as products, coupons (`couponID`) or deposit return vouchers (`type: depositReturnVoucher`); coupons and vouchers that cannot be used are `violations`, never a refusal.',
          'Errors (`{type, message, details}`, repeated under `error`): 400 `bad_shop_id` (shopID missing or malformed), 404 `shop_not_found`, 400 `bad_request` (the cart, with zod issues),',
          '400 `invalid_cart_item` with every refused item in `details` as `{sku, type, message, id}`, 400 `no_available_method`.',
          'Item refusal types: product_not_found, sale_stop, not_for_sale, deposit_alone, max_sale_quantity, device_not_allowed, no_price, weight_required, no_tax_rate, invalid_code.',
        ].join(' '),
        params: ProjectParams,
        body: documentedBody(Cart),
        response: { 200: SignedCheckoutInfo, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const body = ownCart(cartBody(request.body), request.principal?.appUserID);
      // The checkout worker validates the cart (every worker parses its messages) and answers the
      // same 400 with every issue: validating it here as well doubled the work of every checkout.
      // Its signed checkout info goes out as the worker wrote it (a fifth of a checkout's CPU was
      // parsing, checking and stringifying it again here).
      const json = await client.callForJson(checkout.info, { ...body, project: request.params.project });
      return sendJsonBytes(reply, json);
    },
  );
}
