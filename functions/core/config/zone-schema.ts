import { z } from 'zod';
import { isTimeZone } from '../local-time';

/** An IANA time zone name, as a route's `timeZone` and a schedule's `timezone` take it. */
export const TimeZoneSchema = z
  .string({ error: 'a time zone is an IANA name like Africa/Dar_es_Salaam' })
  .refine(isTimeZone, { message: 'unknown time zone; use an IANA name like Africa/Dar_es_Salaam' });
