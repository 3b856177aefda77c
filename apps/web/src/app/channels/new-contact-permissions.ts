/**
 * What Allow (a stranger's message) and adding a contact turn on, the same on every channel: Metatron
 * reads the contact's messages and answers them; "Trusted" (the owner's memory in those replies) stays off
 * until the owner turns it on.
 */
export const NEW_CONTACT_PERMISSIONS = {
  canRead: true,
  canReply: true,
} as const;
