import type { ConfigurationBody } from '../../../subjects/promotions.js';
import { compileConfiguration, type CompiledConfiguration } from './compile.js';

/**
 * Compiled configurations by a key that changes with the configuration's content (e.g.
 * `${project}/${id}/${version}`) and the currency. A worker keeps one: a configuration is compiled
 * once per version, not per cart. Bounded: past `maxEntries` the oldest entry goes.
 */
export class CompiledConfigurations {
  private readonly entries = new Map<string, CompiledConfiguration>();

  constructor(private readonly maxEntries = 100) {}

  get(key: string, currency: string, load: () => ConfigurationBody): CompiledConfiguration {
    const full = `${key}\u0000${currency}`;
    const known = this.entries.get(full);
    if (known) return known;
    const compiled = compileConfiguration(load(), currency);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(full, compiled);
    return compiled;
  }
}
