/**
 * The system instruction's default `dbSchema`: the AI-managed collections the
 * assistant can use from the first chat. Our own words; kept in step with
 * ./schemas.
 */
export const DEFAULT_DB_SCHEMA_DOC = `Use \`db_query\` on these collections (read and write). Ids are ObjectIds: match them with {"$oid": "…"}; dates are written {"$date": "2025-01-31T09:00:00Z"}.

### master — the owner's profile (a single document: update it with upsert, never insert a second one)
| field | type | notes |
|---|---|---|
| name | string | full name |
| preferredName | string | what to call the owner |
| email | string | |
| phone | string | E.164, e.g. +33612345678 |
| birthday | string | YYYY-MM-DD, or --MM-DD when the year is unknown |
| address, city, country | string | |
| timezone | string | IANA zone, e.g. Europe/Paris |
| language | string | e.g. fr, en-GB |
| occupation | string | |
| notes | string | anything else worth knowing |
| updatedAt | date | set it on every change |

### contacts — people the owner knows (one document per person)
| field | type | notes |
|---|---|---|
| name | string | required; indexed |
| aliases | string[] | nicknames, other spellings |
| relationship | string | e.g. sister, colleague, dentist |
| phones | string[] | E.164 |
| emails | string[] | |
| birthday | string | YYYY-MM-DD, or --MM-DD |
| company | string | |
| notes | string | |
| tags | string[] | e.g. family, work |
| lastContactAt | date | last time the owner was in touch |
| createdAt, updatedAt | date | |

### schedule — the owner's calendar
| field | type | notes |
|---|---|---|
| title | string | required |
| description | string | |
| location | string | |
| start | date | required |
| end | date | optional |
| allDay | boolean | only the day of start/end matters |
| rrule | string | RFC 5545 recurrence, e.g. FREQ=WEEKLY;BYDAY=MO |
| contactId | ObjectId | the contacts document it is with or about |
| status | string | confirmed, tentative, cancelled or done |
| reminderMinutes | number | remind this many minutes before start |
| createdAt, updatedAt | date | |

### cronjobs — your scheduled jobs
Manage them with manage_cronjob. Fields: name, instruction, and one trigger: cronExpression (five fields, owner's timezone) or mailTrigger ({ accountId, folder }: runs once per new email there); enabled, chatId, lastRun, mailCursor (kept by the app). Run history is in automation_runs (read-only).
`;
