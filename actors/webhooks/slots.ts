/**
 * Deliveries in flight in this process, bounded per project and per origin (scheme, host, port),
 * so that one tenant's slow or failing receiver holds at most its share of the pool and never
 * starves another's (design.md, "Every tenant is bounded"). A delivery job takes lanes (a lane: a
 * place of its project and one of its origin) for its events; it sends them one after another on
 * each lane, and gives each back when it ends. A job that finds no lane free is given back to the
 * stream and comes again after `deferMs` (it holds no place in the pool while it waits).
 *
 * The bound holds per worker process: with N processes, a project has at most N × perProject
 * deliveries in flight.
 */
export interface DeliverySlots {
  /** Takes up to `wanted` lanes for deliveries of `project` to `origin`; answers how many it got (0: none free). */
  take(project: string, origin: string, wanted: number): number;
  /** Gives one lane back, with how long the delivery on it took. */
  give(project: string, origin: string, tookMs: number): void;
  /** How long a job that found no lane free waits before it comes again: about twice a delivery to its origin, 0.1 to 5 s, spread. */
  deferMs(origin: string): number;
  /** Deliveries in flight now, of a project and to an origin (for tests and logs). */
  inFlight(project: string, origin: string): { project: number; origin: number };
}

const MinDeferMs = 100;
const MaxDeferMs = 5000;

export function createDeliverySlots(limits: { perProject: number; perOrigin: number }): DeliverySlots {
  const projects = new Map<string, number>();
  const origins = new Map<string, { inFlight: number; meanMs: number }>();
  return {
    take(project, origin, wanted) {
      const own = projects.get(project) ?? 0;
      const at = origins.get(origin) ?? { inFlight: 0, meanMs: 0 };
      const lanes = Math.max(0, Math.min(wanted, limits.perProject - own, limits.perOrigin - at.inFlight));
      if (lanes > 0) {
        projects.set(project, own + lanes);
        at.inFlight += lanes;
        origins.set(origin, at);
      }
      return lanes;
    },
    give(project, origin, tookMs) {
      const own = (projects.get(project) ?? 1) - 1;
      if (own > 0) projects.set(project, own);
      else projects.delete(project);
      const at = origins.get(origin);
      if (!at) return;
      at.inFlight--;
      // A mean of the last few deliveries (each weighs a quarter).
      at.meanMs = at.meanMs === 0 ? tookMs : at.meanMs * 0.75 + tookMs * 0.25;
      // An origin with nothing in flight is forgotten: the map holds only the origins being sent to.
      if (at.inFlight <= 0) origins.delete(origin);
    },
    deferMs(origin) {
      const base = Math.min(MaxDeferMs, Math.max(MinDeferMs, 2 * (origins.get(origin)?.meanMs ?? 0)));
      return Math.round(base + Math.random() * base);
    },
    inFlight(project, origin) {
      return { project: projects.get(project) ?? 0, origin: origins.get(origin)?.inFlight ?? 0 };
    },
  };
}
