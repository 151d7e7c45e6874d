import { readFileSync } from 'node:fs';
import Fastify, { LogController, type FastifyInstance, type FastifySchemaCompiler } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { TokenSigner, TokenVerifier } from '../auth/tokens.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { posCredentials } from '../../subjects/pos-credentials.js';
import type { Logger } from '../logger.js';
import type { ServiceClient } from '../messaging/client.js';
import { registerAuth, type PosCredentialCheck } from './auth.js';
import { registerNdjson } from './batch.js';
import { registerErrorHandling } from './errors.js';
import { registerIdempotency } from './idempotency.js';
import { registerMetrics } from './metrics.js';
import type { Metrics } from '../infra/metrics.js';
import { createFailureCounts, type FailureCounts } from './failure-counts.js';
import { registerSecurityHeaders } from './security-headers.js';
import { registerDrain, type EdgeDrain } from './shutdown.js';
import { registerThrottle, registerTokenLimit } from './throttle.js';
import { registerOpenApi } from './openapi.js';
import { asyncApiRoutes } from './asyncapi.js';
import { isDocumentedOnly } from './schemas.js';
import { healthRoutes, type HealthCheck } from './routes/health.js';
import { availabilityRoutes } from './routes/availabilities.js';
import { checkoutRoutes } from './routes/checkout.js';
import { checkoutProcessRoutes } from './routes/checkout-process.js';
import { couponRoutes } from './routes/coupons.js';
import { closingRoutes } from './routes/closings.js';
import { orderRoutes } from './routes/orders.js';
import { fiscalRoutes } from './routes/fiscal.js';
import { posRoutes } from './routes/pos.js';
import { posCredentialRoutes } from './routes/pos-credentials.js';
import { fulfillmentRoutes } from './routes/fulfillments.js';
import { integrationRoutes } from './routes/integrations.js';
import { appSignInRoutes } from './routes/app-sign-in.js';
import { clientRoutes } from './routes/clients.js';
import { oauthRoutes } from './routes/oauth.js';
import { pricingRoutes } from './routes/pricing.js';
import { promotionRoutes } from './routes/promotions.js';
import { receiptRoutes } from './routes/receipts.js';
import { productRoutes } from './routes/products.js';
import { settingsRoutes } from './routes/settings.js';
import { shopRoutes } from './routes/shops.js';
import { portalAccountRoutes } from './routes/portal-accounts.js';
import { portalSessionRoutes, sessionCheck } from './routes/portal-session.js';
import { portalEventRoutes } from './routes/portal-events.js';
import { portalRoutes } from './routes/portal.js';
import type { EventFeed } from '../messaging/event-feed.js';

export type EdgeApp = FastifyInstance;

export interface EdgeDeps {
  config: Config;
  log: Logger;
  client: ServiceClient;
  verifier: TokenVerifier;
  /** Signs the tokens clients are issued (JWT_SECRET); absent when only JWKS_URL verifies tokens. */
  signer?: TokenSigner;
  health: HealthCheck;
  version: string;
  /** Failed sign-in counts (shared by the edges when they share a NATS); the edge does not stop them. */
  failureCounts: FailureCounts;
  /** Whether the process is shutting down (shutdown.ts): /health/ready says 503 and answers close their connection. */
  drain: EdgeDrain;
  metrics: Metrics;
  /** Serve `/metrics` on the edge's port (METRICS_PORT unset). */
  serveMetrics: boolean;
  /** The platform's events as they happen, for the server-sent event routes. */
  events: EventFeed;
}

/** Client input is parsed with the route's zod schema; a failure lists every zod issue in `details`. */
const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  if (isDocumentedOnly(schema)) return (data) => ({ value: data });
  return (data) => {
    const result = schema.safeParse(data);
    return result.success ? { value: result.data } : { error: AppError.validation(result.error, httpPart) };
  };
};

/**
 * Replies were parsed against their contract where they left the worker's message, so the edge only
 * stringifies; the response schemas serve the OpenAPI document.
 */
const serializerCompiler = () => (data: unknown) => JSON.stringify(data);

/** PoS credentials are checked by a worker (it holds their hashes); anything it refuses is a 403. */
function posCredentialCheck(client: ServiceClient): PosCredentialCheck {
  return async (project, user, password) => {
    try {
      const credential = await client.call(posCredentials.verify, { project, user, password });
      return { sub: `pos:${credential.user}`, project, permissions: new Set(credential.permissions), posName: credential.name };
    } catch (err) {
      if (err instanceof AppError && err.status < 500) throw AppError.forbidden('invalid PoS credentials');
      throw err;
    }
  };
}

/** The HTTP edge: auth, validation, OpenAPI, error mapping; every operation is a message to a worker. */
export async function buildEdge(deps: EdgeDeps): Promise<EdgeApp> {
  const { config, log } = deps;
  const tls = config.http.tls;
  const app = Fastify({
    loggerInstance: log,
    // One line per request from the onResponse hook below instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: 'x-request-id',
    // Ids in paths are validated by the routes' schemas; the router only must not cut them short.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    trustProxy: config.http.trustProxy,
    // While draining, a request on a connection that is still open is served (with Connection: close), not refused with a 503.
    return503OnClosing: false,
    ...(tls ? { https: { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) } } : {}),
  }) as unknown as EdgeApp;

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // First: its onRequest hook sets the headers before any other hook can refuse the request.
  registerSecurityHeaders(app, { tls: Boolean(tls) });
  registerErrorHandling(app);
  registerNdjson(app);
  registerDrain(app, deps.drain);
  const tokenCounts = await createFailureCounts({ windowMs: config.throttle.tokenRate.windowMs, log });
  app.addHook('onClose', () => tokenCounts.stop());
  const throttle = await registerThrottle(app, config.throttle, deps.failureCounts, tokenCounts);
  const sessions = { check: sessionCheck(deps.client), origins: config.publicBaseUrl ? [new URL(config.publicBaseUrl).origin] : [] };
  registerAuth(app, deps.verifier, posCredentialCheck(deps.client), throttle, sessions);
  registerTokenLimit(app, config.throttle);
  // A claim outlives the longest a create can take (one worker call) with room to spare.
  registerIdempotency(app, deps.client, { waitMs: config.requestTimeoutMs, leaseMs: Math.max(30_000, 2 * config.requestTimeoutMs) });
  await registerOpenApi(app, deps.version);
  registerMetrics(app, deps.metrics, { serve: deps.serveMetrics });
  if (log.isLevelEnabled('info')) {
    // Installed only when the line would be written: a hook costs every request.
    app.addHook('onResponse', async (request, reply) => {
      request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    });
  }

  const zodApp = app.withTypeProvider<ZodTypeProvider>();
  healthRoutes(zodApp, deps.health, deps.drain);
  asyncApiRoutes(zodApp, deps.version);
  shopRoutes(zodApp, deps.client);
  settingsRoutes(zodApp, deps.client);
  fiscalRoutes(zodApp, deps.client);
  productRoutes(zodApp, deps.client);
  availabilityRoutes(zodApp, deps.client);
  pricingRoutes(zodApp, deps.client);
  checkoutRoutes(zodApp, deps.client);
  checkoutProcessRoutes(zodApp, deps.client);
  posRoutes(zodApp, deps.client);
  posCredentialRoutes(zodApp, deps.client);
  integrationRoutes(zodApp, deps.client);
  clientRoutes(zodApp, deps.client);
  appSignInRoutes(zodApp, deps.client, { throttle, signer: deps.signer, metrics: deps.metrics, appUserCreations: config.throttle.appUserCreations });
  oauthRoutes(zodApp, deps.client, { throttle, signer: deps.signer, metrics: deps.metrics });
  fulfillmentRoutes(zodApp, deps.client);
  orderRoutes(zodApp, deps.client);
  closingRoutes(zodApp, deps.client);
  couponRoutes(zodApp, deps.client, { publicBaseUrl: config.publicBaseUrl });
  receiptRoutes(zodApp, deps.client);
  promotionRoutes(zodApp, deps.client);
  portalSessionRoutes(zodApp, deps.client, { sessions, throttle, ttlMs: config.portal.sessionTtlMs, publicBaseUrl: config.publicBaseUrl });
  portalAccountRoutes(zodApp, deps.client);
  portalEventRoutes(zodApp, deps.events, config.liveStreams);
  portalRoutes(zodApp);
  return app;
}
