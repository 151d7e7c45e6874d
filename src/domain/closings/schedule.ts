import { Weekdays, type Weekday } from '../../../subjects/formats/time.js';

/**
 * When a closing schedule fires, in its own time zone. Pure: the trigger passes the clock in.
 *
 * A schedule names week days and a wall time (hour 0..24, minute 0..59) in an IANA zone. On each
 * listed day it fires at that wall time; hour 24 is the end of the day (00:00 of the next one).
 * DST: a wall time the zone skips that day (02:30 in Berlin on the spring-forward Sunday) fires at
 * the next minute that exists (03:00); a wall time the zone has twice (02:30 on the fall-back
 * Sunday) fires once, at its first occurrence.
 */

export interface FireSpec {
  days: readonly Weekday[];
  hour: number;
  minute: number;
  /** IANA zone name. */
  location: string;
}

export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

const MinuteMs = 60_000;
const DayMs = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The wall time of an instant in a zone, as milliseconds of the same wall time read as UTC. */
export function wallTimeOf(instant: number, zone: string): number {
  const parts = formatterOf(zone).formatToParts(new Date(instant));
  const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall + (instant - Math.floor(instant / 1000) * 1000);
}

/** The local date of an instant in a zone. */
export function localDateOf(instant: number, zone: string): LocalDate {
  const wall = new Date(wallTimeOf(instant, zone));
  return { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate() };
}

/** `2026-11-22` */
export function formatLocalDate(date: LocalDate): string {
  return `${String(date.year).padStart(4, '0')}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')}`;
}

function offsetAt(instant: number, zone: string): number {
  return wallTimeOf(instant, zone) - instant;
}

/**
 * The earliest instant whose wall time in the zone is `wall` (ms of the wall time read as UTC), or
 * undefined when the zone skips that wall time.
 */
function earliestInstantOf(wall: number, zone: string): number | undefined {
  // The offsets in force around that wall time; at most two in any two days.
  const offsets = new Set([offsetAt(wall - DayMs, zone), offsetAt(wall, zone), offsetAt(wall + DayMs, zone)]);
  let earliest: number | undefined;
  for (const offset of offsets) {
    const instant = wall - offset;
    if (wallTimeOf(instant, zone) === wall && (earliest === undefined || instant < earliest)) earliest = instant;
  }
  return earliest;
}

/**
 * When a schedule with this wall time fires on a local date: the first instant with that wall time,
 * or, if the zone skips it that day, the first instant of the next minute that exists.
 */
export function fireInstant(date: LocalDate, hour: number, minute: number, zone: string): Date {
  // Date.UTC carries hour 24 over into the next day.
  const wall = Date.UTC(date.year, date.month - 1, date.day, hour, minute);
  // A gap is at most a few hours long (usually one); look minute by minute past it.
  for (let step = 0; step <= 24 * 60; step++) {
    const instant = earliestInstantOf(wall + step * MinuteMs, zone);
    if (instant !== undefined) return new Date(instant);
  }
  throw new Error(`no wall time after ${new Date(wall).toISOString()} exists in ${zone}`);
}

function weekdayOf(date: LocalDate): Weekday {
  // getUTCDay: 0 is Sunday.
  const index = new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
  return Weekdays[(index + 6) % 7]!;
}

function addDays(date: LocalDate, days: number): LocalDate {
  const moved = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}

/**
 * The latest fire time at or before `now`, or undefined when the schedule has not fired in the past
 * eight days (it lists no day, which validation prevents). Ticks claim this one only, so a tick
 * after a downtime claims one fire time for everything it missed.
 */
export function latestFireAtOrBefore(spec: FireSpec, now: Date): Date | undefined {
  const days = new Set(spec.days);
  const today = localDateOf(now.getTime(), spec.location);
  // Hour 24 of yesterday fires today at 00:00: start one day further back.
  for (let back = -1; back <= 8; back++) {
    const date = addDays(today, -back);
    if (!days.has(weekdayOf(date))) continue;
    const fire = fireInstant(date, spec.hour, spec.minute, spec.location);
    if (fire.getTime() <= now.getTime()) return fire;
  }
  return undefined;
}


/**
 * The latest batch time at or before `now` of a schedule that appends a batch every `everyMs`:
 * the multiples of the interval since 1970-01-01T00:00Z. Counted from a fixed instant (not from
 * the schedule's creation or the last tick) so that every worker process works out the same
 * batch time, which is what makes its claim unique; a whole hour is then on the hour in UTC.
 */
export function latestBatchAtOrBefore(everyMs: number, now: Date): Date {
  return new Date(Math.floor(now.getTime() / everyMs) * everyMs);
}

/** When the batch after `now` is due (the ticker sleeps until then, or its longest nap). */
export function nextBatchAfter(everyMs: number, now: Date): Date {
  return new Date(latestBatchAtOrBefore(everyMs, now).getTime() + everyMs);
}
