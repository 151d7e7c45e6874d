import { ProjectSettings, Settings, settings } from '../../../subjects/settings.js';
import type { ServiceClient } from '../../messaging/client.js';
import { ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const tags = ['settings'];

export function settingsRoutes(app: ZodApp, client: ServiceClient): void {
  app.get(
    '/:project/settings',
    {
      config: { auth: { permissions: [] } },
      schema: {
        tags,
        summary: 'Project settings: currency, tax rate per tax category, payment methods (defaults until first written)',
        params: ProjectParams,
        response: { 200: ProjectSettings, ...ErrorResponses },
      },
    },
    async (request) => client.call(settings.get, { project: request.params.project }),
  );

  app.put(
    '/:project/settings',
    {
      config: { auth: { permissions: ['projectsWrite'] } },
      schema: { tags, summary: 'Replace the project settings', params: ProjectParams, body: Settings, response: { 200: ProjectSettings, ...ErrorResponses } },
    },
    async (request) => client.call(settings.put, { project: request.params.project, settings: request.body }),
  );
}
