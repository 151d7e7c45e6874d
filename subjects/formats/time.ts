/** Time values the contract names: week days, IANA zones and `<h>h<m>m<s>s` durations. */

export const Weekdays = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;
export type Weekday = (typeof Weekdays)[number];

/** Whether a name is an IANA zone (Europe/Berlin, UTC, America/Argentina/Buenos_Aires), not an offset. */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/.test(name) || /^[+-]/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** `1h30m`, `90m`, `45s`, `1h0m0s` (the form `<h>h<m>m<s>s`, each part optional): milliseconds, or undefined. */
export function parseDuration(text: string): number | undefined {
  const match = /^(?:(\d{1,6})h)?(?:(\d{1,7})m)?(?:(\d{1,9})s)?$/.exec(text);
  if (!match || text === '') return undefined;
  const [, h = '0', m = '0', s = '0'] = match;
  return ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000;
}
