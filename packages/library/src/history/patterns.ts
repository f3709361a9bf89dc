/**
 * The string patterns of the message model, in a module of their own so that code checking
 * messages by hand (format/validate.ts) does not load zod with history/schema.ts.
 */
export const SHA256_HEX_PATTERN = /^[0-9a-f]{64}$/;
export const MIME_TYPE_PATTERN = /^[a-z]+\/[a-z0-9.+-]+$/;
