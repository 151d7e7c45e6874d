import { Readable } from 'node:stream';
import { z } from 'zod';
import { Configuration, ConfigurationId, ConfigurationInput, ConfigurationList, promotions } from '../../../subjects/promotions.js';
import { Cart, checkout, Evaluation } from '../../../subjects/checkout.js';
import type { ServiceClient } from '../../messaging/client.js';
import { documentedBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';
import { cartBody } from './checkout.js';
import { inParts, jsonArray } from '../streams.js';

const ConfigParams = ProjectParams.extend({
  configID: z.string().regex(/^\d{1,10}$/, 'a configuration id is an int').transform(Number).pipe(ConfigurationId).describe('The configuration id (an int)'),
});
const tags = ['promotions'];
// The spec wraps errors of the promotion family as {error: {type, message}}.
const read = { auth: { permissions: ['promotionsRead'] }, errorEnvelope: 'wrapped' } as const;
const write = { auth: { permissions: ['promotionsWrite'] }, errorEnvelope: 'wrapped' } as const;

const Checked =
  'The configuration is checked as the engine would apply it: every rankID names a rank; rank, group and rule ids are unique; every condition and action type is known, ' +
  'with its required arguments present and well-formed (money as decimal text in the project currency, percentages 0-100, "true"/"false", comma-separated lists, RFC 3339 times). ' +
  'A problem is 400 bad_request naming its path, e.g. `groups[0].rules[2].actions[0]: addLineItemDiscount needs value`; details list every problem.';

export function promotionRoutes(app: ZodApp, client: ServiceClient): void {
  app.get(
    '/:project/promotions/configurations',
    {
      config: read,
      schema: {
        tags,
        summary: 'List the promotion configurations of the project, by id',
        description: 'Streams `{configurations: [...]}`: the list is read in parts and never held whole. Only one is active.',
        params: ProjectParams,
        response: { 200: ConfigurationList, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project } = request.params;
      const maxBytes = client.maxPayload() - 16 * 1024;
      const page = async (after: number | undefined) => {
        const part = await client.call(promotions.list, { project, after, maxBytes });
        return { items: part.configurations, next: part.next === null ? null : String(part.next) };
      };
      // The first part is read before answering, so that its errors still get their status.
      const items = inParts(await page(undefined), Infinity, (next) => page(Number(next)));
      reply.type('application/json');
      return reply.send(Readable.from(jsonArray(items, '{"configurations":[', ']}')) as never);
    },
  );

  app.post(
    '/:project/promotions/configurations',
    {
      config: { ...write, idempotent: true },
      schema: {
        tags,
        summary: 'Create a promotion configuration (not active); its id is the next free one unless the body gives one',
        description: `${Checked} An id that exists is 409 conflict.`,
        params: ProjectParams,
        body: ConfigurationInput,
        response: { 201: Configuration, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const configuration = await client.call(promotions.create, { project: request.params.project, configuration: request.body });
      return reply
        .code(201)
        .header('location', `/${request.params.project}/promotions/configurations/${configuration.id}`)
        .send(configuration);
    },
  );

  app.get(
    '/:project/promotions/configurations/active',
    {
      config: read,
      schema: { tags, summary: 'The active promotion configuration (404 when none is)', params: ProjectParams, response: { 200: Configuration, ...ErrorResponses } },
    },
    async (request) => client.call(promotions.active, { project: request.params.project }),
  );

  app.get(
    '/:project/promotions/configurations/:configID',
    { config: read, schema: { tags, summary: 'Get a promotion configuration', params: ConfigParams, response: { 200: Configuration, ...ErrorResponses } } },
    async (request) => client.call(promotions.get, { project: request.params.project, id: request.params.configID }),
  );

  app.put(
    '/:project/promotions/configurations/:configID',
    {
      config: write,
      schema: {
        tags,
        summary: 'Replace a promotion configuration; it stays active if it was (the next checkout info prices with it)',
        description: `${Checked} A body id other than the path's is 400.`,
        params: ConfigParams,
        body: ConfigurationInput,
        response: { 200: Configuration, ...ErrorResponses },
      },
    },
    async (request) => client.call(promotions.update, { project: request.params.project, id: request.params.configID, configuration: request.body }),
  );

  app.post(
    '/:project/promotions/configurations/:configID/activate',
    {
      config: write,
      schema: {
        tags,
        summary: 'Make this the active configuration of the project',
        description:
          'The configuration active until now and this one switch in one statement: at every moment exactly one is active. The next checkout info prices with it; ' +
          'a checkout info signed before keeps its prices. Activating the active configuration changes nothing.',
        params: ConfigParams,
        response: { 200: Configuration, ...ErrorResponses },
      },
    },
    async (request) => client.call(promotions.activate, { project: request.params.project, id: request.params.configID }),
  );

  app.post(
    '/:project/promotions/configurations/:configID/evaluate',
    {
      config: read,
      schema: {
        tags,
        summary: 'Price a cart with this configuration, active or not, and say rule by rule what it did',
        description:
          'Answers the checkout info the configuration would produce for the cart (not signed: it cannot start a checkout process) and, per rule, ' +
          'whether its condition held and what it granted (`skippedReason` when it was not applied; `wouldGrant` for a selectBest rule that lost). ' +
          'The cart is a checkout info cart; its errors are those of checkout info.',
        params: ConfigParams,
        body: documentedBody(Cart),
        response: { 200: Evaluation, ...ErrorResponses },
      },
    },
    async (request) => client.call(checkout.evaluate, { ...cartBody(request.body), project: request.params.project, configID: request.params.configID }),
  );
}
