/** `+14155551234` for the digits the server keeps. */
export function formatPhone(phoneNumber: string): string {
  return phoneNumber.startsWith('+') ? phoneNumber : `+${phoneNumber}`;
}
